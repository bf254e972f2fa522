"""Two stored runs side by side: `GET /api/compare` and `graphmind diff`."""
