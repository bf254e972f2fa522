"""`graphmind mcp`: read-only MCP tools over the recorded runs (optionally, steering tools)."""
