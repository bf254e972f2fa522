__version__ = "0.1.0"

# The anthropic versions this package supports (the same range as pyproject.toml's dependency).
SUPPORTED = "anthropic>=1,<3"
