"""Runs leave the hub: `graphmind record` (JSONL, JSON, OTLP), `graphmind import`, OTLP forwarding."""
