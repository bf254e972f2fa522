__version__ = "0.1.0"

# The mcp versions this package supports (the same range as pyproject.toml's dependency).
SUPPORTED = "mcp>=2.2,<3"
