"""GraphMind adapter for the OpenAI Python SDK: instrument_openai(client)."""
