"""Telemetry: who decides, what the record holds, how it leaves (docs/telemetry.md)."""
