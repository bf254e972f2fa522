"""`WS /ingest`: the apps' frames in (protocol v1), their proof, their loss frames."""
