__version__ = "0.1.0"
SUPPORTED = "pydantic-ai-slim>=1,<3"
