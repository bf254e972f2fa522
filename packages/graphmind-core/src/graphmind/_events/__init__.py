"""The event path: a JSON-safe copy, redaction, masks, payload bounds, in one pipeline."""
