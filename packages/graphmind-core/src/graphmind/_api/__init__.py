"""The user-facing API: the Client, gated callables, runs, spans, streaming tools."""
