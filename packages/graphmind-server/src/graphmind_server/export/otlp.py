"""A run as an OTLP trace (OTLP/JSON `ExportTraceServiceRequest`) with OpenInference attributes.

One run is one trace; every node execution is a span whose parent is the execution that enclosed
it (`parentInstanceId`), under the run's agent span. Encoding: the OTLP/JSON form of the
OpenTelemetry specification (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding):
trace and span ids as hex strings, enums as integers, int64 as decimal strings, camelCase keys.
The mapping table is in docs/export.md.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from ..otlp import names as n
from ..otlp.names import OPENINFERENCE_KIND
from ..store import prices
from ..store import usage as tokens
from ..store.derive import text as valid_utf8

SPAN_KIND_INTERNAL = 1
STATUS_OK = 1
STATUS_ERROR = 2

USAGE_ATTRS = (
    ("inputTokens", n.TOKENS_PROMPT),
    ("outputTokens", n.TOKENS_COMPLETION),
    ("totalTokens", n.TOKENS_TOTAL),
)
_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_HEX16 = re.compile(r"^[0-9a-f]{16}$")
OTLP_RUN_PREFIX = "otlp-"  # otlp/spans.py's run ids


def trace_id(run_id: str) -> str:
    """A run id that is a UUID keeps its hex, a run that came in over OTLP its trace id; anything
    else is hashed (stable across exports)."""
    if run_id.startswith(OTLP_RUN_PREFIX) and _HEX32.match(run_id[len(OTLP_RUN_PREFIX) :]):
        return run_id[len(OTLP_RUN_PREFIX) :]
    plain = run_id.replace("-", "").lower()
    if _HEX32.match(plain) and plain != "0" * 32:
        return plain
    return hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def span_id(run_id: str, instance_id: str, occurrence: int) -> str:
    key = f"{run_id}\0{instance_id}\0{occurrence}".encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(key).hexdigest()[:16]
    return digest if digest != "0" * 16 else "0" * 15 + "1"


def _nanos(ms: Any) -> str:
    return str(round(float(ms) * 1_000_000)) if isinstance(ms, (int, float)) else "0"


def _json_text(value: Any) -> tuple[str, str]:
    if isinstance(value, str):
        return value, "text/plain"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")), "application/json"


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        v: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}
    elif isinstance(value, float):
        v = {"doubleValue": value}
    else:
        # A lone surrogate (legal in a JSON escape) is not UTF-8, which protobuf strings must be.
        v = {"stringValue": valid_utf8(value if isinstance(value, str) else _json_text(value)[0])}
    return {"key": key, "value": v}


@dataclass
class _Span:
    span_id: str
    parent: _Span | str | None  # the parent span, or the instance id of one not seen yet
    name: str
    kind: str
    start: float
    end: float | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


def _io(span: _Span, which: str, value: Any) -> None:
    text, mime = _json_text(value)
    value_key, mime_key = (
        (n.INPUT_VALUE, n.INPUT_MIME) if which == "input" else (n.OUTPUT_VALUE, n.OUTPUT_MIME)
    )
    span.attrs[value_key] = text
    span.attrs[mime_key] = mime


def _usage(span: _Span, usage: Any) -> None:
    """Tokens, and the cost: the one the framework reported (LiteLLM), else priced from the hub's
    table (store/prices.py) as the viewer shows it."""
    if not isinstance(usage, dict):
        return
    for ours, theirs in USAGE_ATTRS:
        if isinstance(usage.get(ours), int) and not isinstance(usage.get(ours), bool):
            span.attrs[theirs] = usage[ours]
    counts: dict[str, Any] = {}
    model = span.attrs.get(n.LLM_MODEL)
    if tokens.add(counts, model if isinstance(model, str) else None, usage):
        row = next(iter(counts["models"].values()))
        if row["cachedTokens"]:
            span.attrs[n.TOKENS_CACHE_READ] = row["cachedTokens"]
        cost = tokens.to_api(counts, prices.price)["costUsd"]
        if cost is not None:
            span.attrs[n.COST_TOTAL] = float(cost)


def _model(node_input: Any, attrs: Any) -> str | None:
    for source in (attrs, node_input):
        if isinstance(source, dict) and isinstance(source.get("model"), str):
            return source["model"]
    return None


class TraceBuilder:
    """Feed a run's events in stored order; `spans()` gives OTLP/JSON span objects."""

    def __init__(self, run: dict[str, Any]) -> None:
        self.run = run
        self.run_id: str = run["id"]
        self.trace_id = trace_id(self.run_id)
        # A run that came in over OTLP keeps its span ids (its instance ids), so a trace sent on
        # and back is recognised span by span instead of stored twice.
        self.keeps_ids = run["id"].startswith(OTLP_RUN_PREFIX)
        self.root = _Span(
            span_id(self.run_id, self.run_id, 0),
            None,
            run.get("name") or self.run_id,
            "AGENT",
            float(run.get("startedAt") or 0),
        )
        self.root.attrs.update({n.GM_RUN_ID: self.run_id, n.GM_STATUS: run.get("status", "")})
        self.open: dict[str, _Span] = {self.run_id: self.root}  # instanceId -> its latest span
        self.seen: dict[str, int] = {}
        self.done: list[_Span] = []
        self.last_ts = self.root.start

    def add(self, ev: dict[str, Any]) -> None:
        kind, ts = ev.get("type"), ev.get("ts")
        if isinstance(ts, (int, float)) and not isinstance(ts, bool):
            self.last_ts = max(self.last_ts, float(ts))
        else:
            ts = self.last_ts
        instance = ev.get("instanceId") if isinstance(ev.get("instanceId"), str) else None
        if kind == "run.started":
            self.root.start = float(ts)
            if instance is not None and instance != self.run_id:
                # A run that came in over OTLP: its agent node is the root span, whose span id
                # its children name as their parentInstanceId (docs/export.md).
                self.open[instance] = self.root
                if self.keeps_ids and _HEX16.match(instance):
                    self.root.span_id = instance
            if ev.get("input") is not None:
                _io(self.root, "input", ev["input"])
            if isinstance(ev.get("meta"), dict) and ev["meta"]:
                self.root.attrs[n.METADATA] = _json_text(ev["meta"])[0]
        elif kind == "run.finished":
            self.root.end = float(ts)
            if ev.get("status") in ("error", "aborted"):
                self.root.error = _error_text(ev.get("error")) or f"run {ev.get('status')}"
            if ev.get("output") is not None:
                _io(self.root, "output", ev["output"])
        elif kind == "node.started" and instance is not None and instance != self.run_id:
            self._start(ev, instance, float(ts))
        elif instance is not None and instance in self.open:
            self._update(self.open[instance], ev, kind, float(ts))

    def _start(self, ev: dict[str, Any], instance: str, ts: float) -> None:
        occurrence = self.seen.get(instance, 0)
        self.seen[instance] = occurrence + 1
        parent_instance = ev.get("parentInstanceId")
        parent: _Span | str | None = None
        if isinstance(parent_instance, str):
            # Not seen yet: an OTLP run stores spans as they land, a child before its parent.
            parent = self.open.get(parent_instance, parent_instance)
        node_kind: str = ev["kind"] if isinstance(ev.get("kind"), str) else "custom"
        name: str = ev["name"] if isinstance(ev.get("name"), str) else str(ev.get("nodeId", "node"))
        keep = self.keeps_ids and occurrence == 0 and _HEX16.match(instance)
        span = _Span(
            instance if keep else span_id(self.run_id, instance, occurrence),
            parent or self.root,
            name,
            OPENINFERENCE_KIND.get(node_kind, "CHAIN"),
            ts,
        )
        span.attrs.update(
            {
                n.GM_NODE_ID: ev.get("nodeId", ""),
                n.GM_INSTANCE_ID: instance,
                n.GM_KIND: node_kind,
            }
        )
        if "input" in ev:
            _io(span, "input", ev["input"])
        model = _model(ev.get("input"), ev.get("attrs"))
        if model is not None and node_kind == "llm":
            span.attrs[n.LLM_MODEL] = model
        if node_kind == "tool":
            span.attrs[n.TOOL_NAME] = name
            span.attrs[n.TOOL_CALL_NAME] = name
            if "input" in ev:  # the same text as input.value
                span.attrs[n.TOOL_CALL_ARGUMENTS] = span.attrs[n.INPUT_VALUE]
            span.attrs[n.TOOL_CALL_ID] = instance
        if isinstance(ev.get("attrs"), dict) and ev["attrs"]:
            span.attrs[n.GM_ATTRS] = _json_text(ev["attrs"])[0]
        self.open[instance] = span
        self.done.append(span)

    def _update(self, span: _Span, ev: dict[str, Any], kind: Any, ts: float) -> None:
        if kind == "node.finished":
            span.end = ts
            if "output" in ev:
                _io(span, "output", ev["output"])
            _usage(span, ev.get("usage"))
            for ours, key in (("injected", n.GM_INJECTED), ("cutShort", n.GM_CUT_SHORT)):
                if ev.get(ours) is True:
                    span.attrs[key] = True
            if isinstance(ev.get("heldMs"), (int, float)) and ev["heldMs"]:
                span.attrs[n.GM_HELD_MS] = float(ev["heldMs"])
        elif kind == "node.error":
            span.end = ts
            err: dict[str, Any] = ev["error"] if isinstance(ev.get("error"), dict) else {}
            span.error = _error_text(err) or "error"
            span.events.append(
                _event(
                    n.EXCEPTION_EVENT,
                    ts,
                    {
                        n.EXCEPTION_TYPE: err.get("name", ""),
                        n.EXCEPTION_MESSAGE: err.get("message", ""),
                        n.EXCEPTION_STACKTRACE: err.get("stack", ""),
                    },
                )
            )
        elif kind == "exec.paused":
            span.events.append(
                _event(
                    n.GM_GATE_HELD,
                    ts,
                    {
                        n.GM_GATE: ev.get("gate", ""),
                        n.GM_REASON: ev.get("reason", ""),
                        n.GM_GATE_ID: ev.get("gateId", ""),
                    },
                )
            )
        elif kind == "exec.resumed":
            fields = {
                n.GM_GATE: ev.get("gate", ""),
                n.GM_ACTION: ev.get("action", ""),
                n.GM_BY: ev.get("by", ""),
            }
            if isinstance(ev.get("heldMs"), (int, float)):
                fields[n.GM_HELD_MS] = float(ev["heldMs"])
            span.events.append(_event(n.GM_GATE_ANSWERED, ts, fields))

    def spans(self) -> list[dict[str, Any]]:
        out = []
        for span in [self.root, *self.done]:
            end = span.end if span.end is not None else max(self.last_ts, span.start)
            if span.end is None:
                span.attrs[n.GM_UNFINISHED] = True
            attrs = [attr(n.SPAN_KIND, span.kind)]
            attrs += [attr(k, v) for k, v in span.attrs.items() if v is not None]
            item: dict[str, Any] = {
                "traceId": self.trace_id,
                "spanId": span.span_id,
                "name": span.name,
                "kind": SPAN_KIND_INTERNAL,
                "startTimeUnixNano": _nanos(span.start),
                "endTimeUnixNano": _nanos(end),
                "attributes": attrs,
                "events": span.events,
                "status": {"code": STATUS_ERROR, "message": span.error}
                if span.error
                else {"code": STATUS_OK},
            }
            parent = span.parent
            if isinstance(parent, str):
                parent = self.open.get(parent, self.root)  # a parent that never came: the root
            if parent is not None and parent is not span:
                item["parentSpanId"] = parent.span_id
            out.append(item)
        return out


def _error_text(err: Any) -> str:
    if isinstance(err, dict):
        return ": ".join(str(err[k]) for k in ("name", "message") if err.get(k))
    return ""


def _event(name: str, ts: float, fields: dict[str, Any]) -> dict[str, Any]:
    return {"timeUnixNano": _nanos(ts), "name": name, "attributes": [attr(k, v) for k, v in fields.items()]}


def resource_spans(run: dict[str, Any], events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One run as one ResourceSpans (service.name = the app)."""
    builder = TraceBuilder(run)
    for ev in events:
        builder.add(ev)
    return {
        "resource": {
            "attributes": [
                attr(n.SERVICE_NAME, run.get("app") or "graphmind"),
                attr(n.GM_CLIENT_ID, run.get("clientId") or ""),
            ]
        },
        "scopeSpans": [{"scope": {"name": "graphmind", "version": __version__}, "spans": builder.spans()}],
    }


def request(resource_spans_list: list[dict[str, Any]]) -> dict[str, Any]:
    """An OTLP/JSON ExportTraceServiceRequest."""
    return {"resourceSpans": resource_spans_list}
