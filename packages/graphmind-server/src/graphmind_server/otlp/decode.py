"""An OTLP/HTTP trace request body (protobuf or JSON, maybe gzip) as plain spans.

Encodings: https://opentelemetry.io/docs/specs/otlp/#otlphttp. Protobuf is read with
opentelemetry-proto's generated `ExportTraceServiceRequest`; JSON is the OTLP/JSON mapping (ids as
hex, 64-bit integers as decimal strings, camelCase keys), also taking proto3 JSON's base64 ids and
snake_case keys, which `json_format` writes. A body that is not a request is `BadPayload` (one line,
the 400's reason); a span without a usable trace or span id is skipped and counted (`rejected`).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import zlib
from dataclasses import dataclass, field
from typing import Any

from ..store.derive import text as clean_text
from . import names as n

# A gzip body may not inflate beyond this (a zip bomb is a 413), nor a body hold more spans: what a
# request costs in memory follows its span count (~1.5 KB a span decoded) and its inflated size.
MAX_INFLATED = 32 * 1024 * 1024
MAX_SPANS = 65_536
STATUS_ERROR = 2
# SpanFlags (opentelemetry/proto/trace/v1/trace.proto): bit 8 says bit 9 is known, bit 9 that
# the parent is remote (it lives in another process: this span is the local root).
FLAG_HAS_IS_REMOTE = 0x100
FLAG_IS_REMOTE = 0x200


class BadPayload(ValueError):
    """The body cannot be read; str() is the 400's one-line reason."""


class TooLarge(BadPayload):
    pass


def _too_many(count: int) -> TooLarge:
    return TooLarge(
        f"the body holds {count:,} spans, over {MAX_SPANS:,} in one request; export smaller "
        "batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)"
    )


@dataclass(slots=True)
class Span:
    trace_id: str  # 32 hex digits
    span_id: str  # 16 hex digits
    parent_id: str | None
    parent_remote: bool
    name: str
    start_ns: int
    end_ns: int
    attrs: dict[str, Any]
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    status_code: int = 0
    status_message: str = ""
    service: str = "unknown"
    scope: str = ""

    @property
    def is_root(self) -> bool:
        return self.parent_id is None or self.parent_remote


@dataclass
class Decoded:
    spans: list[Span]
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)

    def reject(self, reason: str) -> None:
        self.rejected += 1
        if len(self.reasons) < 3:
            self.reasons.append(reason)


def inflate(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding != "gzip":
        raise BadPayload(f"Content-Encoding {encoding!r} is not taken; send gzip or none")
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, MAX_INFLATED + 1)
    except zlib.error as exc:
        raise BadPayload(f"the body is not valid gzip ({exc})") from None
    if len(out) > MAX_INFLATED or inflater.unconsumed_tail:
        raise TooLarge(f"the gzip body inflates beyond {MAX_INFLATED // (1024 * 1024)} MiB")
    return out


def decode(body: bytes, content_type: str) -> Decoded:
    """Spans of a request in `content_type` (`application/x-protobuf` or `application/json`)."""
    if content_type == "application/json":
        return _from_json(body)
    return _from_protobuf(body)


# -- values ----------------------------------------------------------------------------------------


def _number(value: float) -> float | str:
    if math.isfinite(value):
        return value
    # The wire has no NaN or Infinity: spelled as the SDKs spell them (docs/protocol.md).
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def _text(value: Any) -> str:
    return clean_text(value) if isinstance(value, str) else str(value)


# -- protobuf --------------------------------------------------------------------------------------


def _from_protobuf(body: bytes) -> Decoded:
    try:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:  # installed without its dependencies
        raise BadPayload(
            "this hub cannot read OTLP protobuf (opentelemetry-proto is not installed): "
            "pip install opentelemetry-proto, or set OTEL_EXPORTER_OTLP_PROTOCOL=http/json"
        ) from None
    try:
        request = ExportTraceServiceRequest.FromString(body)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise BadPayload(
            f"the body is not an OTLP ExportTraceServiceRequest in protobuf ({str(exc)[:200]})"
        ) from None
    count = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
    if count > MAX_SPANS:
        raise _too_many(count)
    out = Decoded([])
    for rs in request.resource_spans:
        resource = {kv.key: _pb_value(kv.value) for kv in rs.resource.attributes}
        service = _text(resource.get(n.SERVICE_NAME) or "unknown")
        for ss in rs.scope_spans:
            scope = _text(ss.scope.name)
            for s in ss.spans:
                ids = _ids(
                    out, bytes(s.trace_id).hex(), bytes(s.span_id).hex(), bytes(s.parent_span_id).hex()
                )
                if ids is None:
                    continue
                flags = s.flags
                out.spans.append(
                    Span(
                        *ids,
                        parent_remote=bool(flags & FLAG_HAS_IS_REMOTE and flags & FLAG_IS_REMOTE),
                        name=_text(s.name),
                        start_ns=s.start_time_unix_nano,
                        end_ns=s.end_time_unix_nano,
                        attrs={kv.key: _pb_value(kv.value) for kv in s.attributes},
                        events=[
                            (
                                _text(e.name),
                                e.time_unix_nano,
                                {kv.key: _pb_value(kv.value) for kv in e.attributes},
                            )
                            for e in s.events
                        ],
                        status_code=s.status.code,
                        status_message=_text(s.status.message),
                        service=service,
                        scope=scope,
                    )
                )
    return out


def _pb_value(v: Any) -> Any:
    which = v.WhichOneof("value")
    if which == "string_value":
        return v.string_value
    if which == "bool_value":
        return v.bool_value
    if which == "int_value":
        return v.int_value
    if which == "double_value":
        return _number(v.double_value)
    if which == "array_value":
        return [_pb_value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _pb_value(kv.value) for kv in v.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(v.bytes_value).decode("ascii")
    return None


# -- JSON ------------------------------------------------------------------------------------------


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadPayload(f"the number {text[:40]} in the body is out of range")
    return value


def _from_json(body: bytes) -> Decoded:
    try:
        doc = json.loads(body, parse_float=_finite)
    except BadPayload:
        raise
    except RecursionError:
        raise BadPayload("the body is nested too deeply to read") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadPayload(f"the body is not JSON ({str(exc)[:200]})") from None
    if not isinstance(doc, dict):
        raise BadPayload("the body must be a JSON object with a list resourceSpans (OTLP/JSON)")
    resource_spans = _get(doc, "resourceSpans", "resource_spans", default=[])
    if not isinstance(resource_spans, list):
        raise BadPayload("resourceSpans must be a list (OTLP/JSON)")
    out = Decoded([])
    for rs in resource_spans:
        if not isinstance(rs, dict):
            raise BadPayload("each resourceSpans entry must be an object (OTLP/JSON)")
        resource = _get(rs, "resource", default={})
        resource_attrs = _kvs(resource.get("attributes") if isinstance(resource, dict) else None)
        service = _text(resource_attrs.get(n.SERVICE_NAME) or "unknown")
        for ss in _list(_get(rs, "scopeSpans", "scope_spans", default=[]), "scopeSpans"):
            scope_obj = _get(ss, "scope", default={})
            scope = _text(scope_obj.get("name", "")) if isinstance(scope_obj, dict) else ""
            listed = _list(_get(ss, "spans", default=[]), "spans")
            if len(out.spans) + len(listed) > MAX_SPANS:
                raise _too_many(len(out.spans) + len(listed))
            for s in listed:
                _json_span(out, s, service, scope)
    return out


def _json_span(out: Decoded, s: dict[str, Any], service: str, scope: str) -> None:
    ids = _ids(
        out,
        _json_id(_get(s, "traceId", "trace_id"), 16),
        _json_id(_get(s, "spanId", "span_id"), 8),
        _json_id(_get(s, "parentSpanId", "parent_span_id"), 8),
    )
    if ids is None:
        return
    status = _get(s, "status", default={})
    status = status if isinstance(status, dict) else {}
    flags = _int(_get(s, "flags", default=0))
    events = []
    for e in _get(s, "events", default=[]) or []:
        if isinstance(e, dict):
            events.append(
                (
                    _text(e.get("name", "")),
                    _int(_get(e, "timeUnixNano", "time_unix_nano")),
                    _kvs(e.get("attributes")),
                )
            )
    out.spans.append(
        Span(
            *ids,
            parent_remote=bool(flags & FLAG_HAS_IS_REMOTE and flags & FLAG_IS_REMOTE),
            name=_text(s.get("name", "")),
            start_ns=_int(_get(s, "startTimeUnixNano", "start_time_unix_nano")),
            end_ns=_int(_get(s, "endTimeUnixNano", "end_time_unix_nano")),
            attrs=_kvs(s.get("attributes")),
            events=events,
            status_code=_status_code(status.get("code")),
            status_message=_text(status.get("message", "")),
            service=service,
            scope=scope,
        )
    )


def _get(obj: Any, *keys: str, default: Any = None) -> Any:
    if not isinstance(obj, dict):
        return default
    for key in keys:
        if key in obj:
            return obj[key]
    return default


def _list(value: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
        raise BadPayload(f"{what} must be a list of objects (OTLP/JSON)")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return 0
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    return 0


def _status_code(value: Any) -> int:
    if isinstance(value, str):
        return {"STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(value, _int(value))
    return _int(value)


def _json_id(value: Any, size: int) -> str:
    """Hex (OTLP/JSON) or base64 (proto3 JSON) → hex; "" when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return ""
    if len(value) == size * 2:
        try:
            bytes.fromhex(value)
            return value.lower()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value  # _ids says why it is refused
    return raw.hex() if len(raw) == size else value


def _kvs(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in items if isinstance(items, list) else []:
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = _json_value(kv.get("value"))
    return out


def _json_value(v: Any) -> Any:
    if not isinstance(v, dict):
        return None
    if "stringValue" in v or "string_value" in v:
        return _text(_get(v, "stringValue", "string_value"))
    if "boolValue" in v or "bool_value" in v:
        return _get(v, "boolValue", "bool_value") is True
    if "intValue" in v or "int_value" in v:
        return _int(_get(v, "intValue", "int_value"))
    if "doubleValue" in v or "double_value" in v:
        d = _get(v, "doubleValue", "double_value")
        return _number(float(d)) if isinstance(d, (int, float, str)) and _is_number(d) else None
    if "arrayValue" in v or "array_value" in v:
        arr = _get(v, "arrayValue", "array_value")
        return [_json_value(x) for x in (arr.get("values") or [])] if isinstance(arr, dict) else []
    if "kvlistValue" in v or "kvlist_value" in v:
        kv = _get(v, "kvlistValue", "kvlist_value")
        return _kvs(kv.get("values")) if isinstance(kv, dict) else {}
    if "bytesValue" in v or "bytes_value" in v:
        return _text(_get(v, "bytesValue", "bytes_value"))
    return None


def _is_number(d: Any) -> bool:
    try:
        float(d)
        return True
    except ValueError:
        return False


# -- ids -------------------------------------------------------------------------------------------


def _ids(out: Decoded, trace: str, span: str, parent: str) -> tuple[str, str, str | None] | None:
    if len(trace) != 32 or trace == "0" * 32 or not _hex(trace):
        out.reject(f"a span has no valid traceId (16 bytes, not all zero; got {trace[:40]!r})")
        return None
    if len(span) != 16 or span == "0" * 16 or not _hex(span):
        out.reject(f"a span has no valid spanId (8 bytes, not all zero; got {span[:40]!r})")
        return None
    if len(parent) != 16 or parent == "0" * 16 or not _hex(parent):
        return trace, span, None
    return trace, span, parent


def _hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
        return True
    except ValueError:
        return False
