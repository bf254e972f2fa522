"""`graphmind_server.testing.otlp_file.OtlpFileExporter` (needs opentelemetry-sdk and the OTLP exporter): an OpenTelemetry span exporter that writes an OTLP trace file, as the
Collector's file exporter does (`format: json`: one OTLP/JSON `ExportTraceServiceRequest` a line,
ids as hex; `format: proto`: each request's protobuf after its 4-byte big-endian length), for tests
of `graphmind import FILE` with a trace no hub received."""

from __future__ import annotations

import base64
import json
import struct
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

_IDS = ("traceId", "spanId", "parentSpanId")


class OtlpFileExporter(SpanExporter):
    def __init__(self, path: str | Path, file_format: str = "json") -> None:
        if file_format not in ("json", "proto"):
            raise ValueError(f"file_format is json or proto (got {file_format!r})")
        self.path = Path(path)
        self.format = file_format
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        request = encode_spans(spans)
        with self._lock:
            if self.format == "proto":
                data = request.SerializeToString()
                with self.path.open("ab") as out:
                    out.write(struct.pack(">I", len(data)) + data)
            else:
                body = json_format.MessageToDict(request)
                with self.path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(_hex_ids(body), separators=(",", ":")) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def _hex_ids(value: Any) -> Any:
    """OTLP/JSON writes ids as hex (proto3 JSON, which json_format follows, as base64)."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex() if k in _IDS and isinstance(v, str) else _hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value
