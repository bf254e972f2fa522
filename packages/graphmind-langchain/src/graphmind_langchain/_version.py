"""The package's version and the langchain-core versions it is tested against (nox: the newest and the previous line)."""

__version__ = "0.1.0"
SUPPORTED = "langchain-core>=0.3.0,<2"
SUPPORTED_RANGE = SUPPORTED  # its earlier name, kept (no warning) for code that imports it
