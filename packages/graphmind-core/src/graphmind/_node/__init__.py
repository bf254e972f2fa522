"""One node: its spec, its record, the call and stream loops, the engine adapters use."""
