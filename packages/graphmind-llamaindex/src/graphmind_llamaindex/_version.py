"""The package's version and the llama-index-core versions it is tested against (nox: the newest and the previous line)."""

__version__ = "0.1.0"
SUPPORTED = "llama-index-core>=0.14.5,<0.15"
SUPPORTED_RANGE = SUPPORTED  # its earlier name, kept (no warning) for code that imports it
