"""The hub's live state, owned by the event loop (attached apps, held gates, pause, debug state), and its settings."""
