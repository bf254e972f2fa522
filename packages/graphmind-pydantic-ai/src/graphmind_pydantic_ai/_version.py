__version__ = "0.1.0"
# The Pydantic AI releases this adapter's hooks were read in (docs/pydantic-ai.md): 2.62 is the first
# with `AbstractCapability.get_wrapper_model`, the hook every model request goes through.
SUPPORTED = "pydantic-ai-slim>=2.62,<3"
