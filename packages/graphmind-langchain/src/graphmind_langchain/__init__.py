"""GraphMind adapter for LangChain and LangGraph: a callback handler and gated tools and models."""
