"""The playground: one stored model call sent again, edited, by the hub (docs/viewer.md)."""
