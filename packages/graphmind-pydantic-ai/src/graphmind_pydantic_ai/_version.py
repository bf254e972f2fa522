__version__ = "0.1.0"
# The Pydantic AI releases this adapter's hooks were read in (docs/pydantic-ai.md): 2.15 is the first
# whose CompletedStreamedResponse replays a reply as stream events (an injected streamed reply).
SUPPORTED = "pydantic-ai-slim>=2.15,<3"
