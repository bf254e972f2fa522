"""The GraphMind hub: ingest, control API, SQLite store, web viewer and the graphmind CLI."""
