"""Posting OTLP/HTTP to a collector: protobuf (opentelemetry-proto, a dependency) or JSON."""

from __future__ import annotations

import base64
import copy
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .source import ExportError

PROTOCOLS = ("http/protobuf", "http/json")
OTLP_EXTRA_MISSING = (
    "--otlp-protocol http/protobuf needs opentelemetry-proto: "
    "pip install opentelemetry-proto (graphmind-server depends on it; or pass --otlp-protocol http/json)"
)


def traces_url(endpoint: str) -> str:
    """A bare collector address gets the OTLP traces path (as OTEL_EXPORTER_OTLP_ENDPOINT does);
    a URL with a path is used as given (as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is)."""
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ExportError(
            f"--otlp-endpoint must be an http(s) URL like http://127.0.0.1:4318 (got {endpoint!r})"
        )
    path = parts.path if parts.path not in ("", "/") else "/v1/traces"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def parse_headers(items: list[str] | None) -> dict[str, str]:
    headers = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ExportError(f"--header must be KEY=VALUE (got {item!r})")
        headers[key.strip()] = value.strip()
    return headers


def proto3_json(request: dict[str, Any]) -> dict[str, Any]:
    """The same request with ids as proto3 JSON spells bytes (base64): what json_format parses."""
    out = copy.deepcopy(request)
    for rs in out.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode("ascii")
    return out


def to_protobuf(request: dict[str, Any]) -> bytes:
    try:
        from google.protobuf import json_format
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise ExportError(OTLP_EXTRA_MISSING) from None
    message = json_format.ParseDict(proto3_json(request), ExportTraceServiceRequest())
    return bytes(message.SerializeToString())


def check_protocol(protocol: str) -> None:
    if protocol not in PROTOCOLS:
        raise ExportError(f"--otlp-protocol must be one of {', '.join(PROTOCOLS)} (got {protocol!r})")
    if protocol == "http/protobuf":
        try:
            import opentelemetry.proto.collector.trace.v1.trace_service_pb2  # noqa: F401
        except ImportError:
            raise ExportError(OTLP_EXTRA_MISSING) from None


class CollectorUnavailable(ExportError):
    """The collector is down, unreachable, or answered 429 / 5xx: worth trying again later."""


@dataclass
class OtlpTarget:
    url: str
    protocol: str = "http/protobuf"
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 10.0

    def post(self, request: dict[str, Any]) -> None:
        """Send one ExportTraceServiceRequest; ExportError (one line) when the collector does not take it."""
        if self.protocol == "http/json":
            body, ctype = json.dumps(request, separators=(",", ":")).encode("utf-8"), "application/json"
        else:
            body, ctype = to_protobuf(request), "application/x-protobuf"
        req = urllib.request.Request(
            self.url, data=body, method="POST", headers={**self.headers, "Content-Type": ctype}
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                resp.read()
        except urllib.error.HTTPError as exc:
            kind = CollectorUnavailable if exc.code == 429 or exc.code >= 500 else ExportError
            raise kind(
                f"the collector at {self.url} answered {exc.code} {exc.reason}; "
                "check --otlp-endpoint, --otlp-protocol and --header"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise CollectorUnavailable(
                f"cannot reach the collector at {self.url} ({reason}); check --otlp-endpoint"
            ) from None
