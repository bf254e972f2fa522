"""GraphMind for LlamaIndex."""
