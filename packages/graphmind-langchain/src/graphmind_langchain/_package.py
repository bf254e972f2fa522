"""The langchain-core versions this package is tested against (nox: the newest and the previous line)."""

SUPPORTED = "langchain-core>=0.3.0,<2"
SUPPORTED_RANGE = SUPPORTED  # its earlier name, kept (no warning) for code that imports it
