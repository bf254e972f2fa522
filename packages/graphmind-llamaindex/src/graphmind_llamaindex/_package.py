"""The llama-index-core versions this package is tested against (nox: the newest and the previous line)."""

SUPPORTED = "llama-index-core>=0.14.5,<0.15"
SUPPORTED_RANGE = SUPPORTED  # its earlier name, kept (no warning) for code that imports it
