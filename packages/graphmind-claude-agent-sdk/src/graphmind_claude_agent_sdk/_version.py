__version__ = "0.1.0"

# The claude-agent-sdk versions this package supports (the same range as pyproject.toml's dependency).
SUPPORTED = "claude-agent-sdk>=0.2.190,<0.3"
