"""`POST /v1/traces`: OTLP/HTTP spans in (JSON or protobuf), mapped to GraphMind events."""
