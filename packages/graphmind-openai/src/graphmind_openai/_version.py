__version__ = "0.1.0"

# The openai versions this package supports (the same range as pyproject.toml's dependency).
SUPPORTED = "openai>=2,<4"
