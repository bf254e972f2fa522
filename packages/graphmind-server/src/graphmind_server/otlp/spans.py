"""One OTLP span as GraphMind events (docs/protocol.md), the inverse of `export/otlp.py`.

A trace is a run (`otlp-<traceId>`). Its root span (no parent, or a remote one) starts and ends
the run: an agent root span is the run's agent node itself (`run.started`'s `instanceId` = its span
id); any other root (a lone LLM call) gets an agent node named after it and becomes a node under
it. Every other span is one node execution: `instanceId` = its span id, `parentInstanceId` = its
parent's span id, so a child that lands before its parent (spans are exported when they end) is
parented all the same, and one whose parent never lands still reads. Events carry the span's own
times; `seq` is given by the hub (`route.py`).
"""

from __future__ import annotations

import json
from typing import Any

from ..store.derive import text as clean_text
from . import messages
from . import names as n
from .decode import STATUS_ERROR, Span

RUN_PREFIX = "otlp-"
STARTED, FINISHED = 0, 1  # the order of a span's events at equal times


def run_id(trace_id: str) -> str:
    return RUN_PREFIX + trace_id


def gated_by(scope: str, attrs: dict[str, Any]) -> str | None:
    """The GraphMind adapter that would gate what this instrumentation observed, if there is one."""
    last = scope.rsplit(".", 1)[-1].replace("-", "_").lower() if scope else ""
    if last in n.GATED_BY:
        return n.GATED_BY[last]
    for key in (n.GENAI_PROVIDER, n.GENAI_SYSTEM, n.LLM_PROVIDER, n.LLM_SYSTEM):
        value = attrs.get(key)
        if isinstance(value, str) and value.lower() in n.GATED_BY:
            return n.GATED_BY[value.lower()]
    return None


def _ms(ns: int) -> float:
    return ns / 1_000_000


def _str(value: Any) -> str | None:
    return clean_text(value) if isinstance(value, str) and value else None


def _value(attrs: dict[str, Any], value_key: str, mime_key: str) -> Any:
    """`input.value` as JSON when its mime type says so (or, with none given, when it is a JSON
    object or list: smolagents sends its tools' arguments so), else as the text it is."""
    value = attrs.get(value_key)
    mime = attrs.get(mime_key)
    if isinstance(value, str) and (
        mime == "application/json" or (mime is None and value.lstrip()[:1] in ("{", "["))
    ):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _json_or_text(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _strip(name: str, prefix: str) -> str:
    return name[len(prefix) :].strip() or name if name.startswith(prefix) else name


def classify(span: Span) -> tuple[str, str, str]:
    """(kind, name, nodeId) of a span."""
    a = span.attrs
    ours = _str(a.get(n.GM_KIND))
    if ours is not None:  # a GraphMind export posted back: its own ids
        node_id = _str(a.get(n.GM_NODE_ID)) or f"{ours}:{span.name}"
        return ours, span.name or node_id.partition(":")[2], node_id
    oi_kind = a.get(n.SPAN_KIND)
    operation = a.get(n.GENAI_OPERATION)
    if isinstance(oi_kind, str):
        kind = n.NODE_KIND.get(oi_kind.upper(), "custom")
    elif isinstance(operation, str):
        kind = n.GENAI_KIND.get(operation, "custom")
    elif isinstance(a.get(n.LLM_REQUEST_TYPE), str):
        kind = n.REQUEST_TYPES.get(a[n.LLM_REQUEST_TYPE], "custom")
    elif isinstance(a.get(n.TRACELOOP_KIND), str):
        kind = n.TRACELOOP_KINDS.get(a[n.TRACELOOP_KIND], "custom")
    else:
        kind = "custom"
    if kind == "llm":
        return kind, "step", "llm:step"
    if kind == "tool":
        name = (
            _str(a.get(n.TOOL_NAME))
            or _str(a.get(n.GENAI_TOOL_NAME))
            or _str(a.get(n.TOOL_CALL_NAME))
            or _strip(span.name, "execute_tool ")
        )
    elif kind == "agent":
        name = (
            _str(a.get(n.GENAI_AGENT_NAME)) or _str(a.get(n.AGENT_NAME)) or _strip(span.name, "invoke_agent ")
        )
    else:
        name = span.name
    if n.TRACELOOP_KIND in a:  # OpenLLMetry names a workflow, task, agent or tool here
        name = _str(a.get(n.TRACELOOP_ENTITY)) or name
    name = name or kind
    return kind, name, f"{kind}:{name}"


def _model(a: dict[str, Any]) -> str | None:
    return (
        _str(a.get(n.LLM_MODEL)) or _str(a.get(n.GENAI_RESPONSE_MODEL)) or _str(a.get(n.GENAI_REQUEST_MODEL))
    )


def _io(span: Span, kind: str) -> tuple[Any, Any, bool, bool]:
    """(input, output, has input, has output) of a span."""
    a = span.attrs
    if kind == "llm" and n.GM_KIND not in a:
        found = messages.input_messages(a)
        if found is not None:
            node_input: dict[str, Any] = {"model": _model(a), "messages": found}
            tools = messages.tool_names(a)
            if tools:
                node_input["tools"] = tools
            reply = messages.output_message(a)
            if reply is not None:
                reasons = a.get(n.GENAI_FINISH_REASONS)
                if "finish_reason" not in reply and isinstance(reasons, list) and reasons:
                    reply["finish_reason"] = reasons[0]
                elif "finish_reason" not in reply and isinstance(a.get(n.LLM_FINISH_REASON), str):
                    reply["finish_reason"] = a[n.LLM_FINISH_REASON]
                if _model(a):
                    reply["model"] = _model(a)
                return node_input, reply, True, True
            out = _value(a, n.OUTPUT_VALUE, n.OUTPUT_MIME)
            return node_input, out, True, out is not None
    node_in = _value(a, n.INPUT_VALUE, n.INPUT_MIME)
    node_out = _value(a, n.OUTPUT_VALUE, n.OUTPUT_MIME)
    if kind == "tool" and n.GM_KIND not in a:
        if node_in is None:
            node_in = _json_or_text(a.get(n.GENAI_TOOL_ARGUMENTS, a.get(n.TOOL_CALL_ARGUMENTS)))
        if node_out is None:
            node_out = _json_or_text(a.get(n.GENAI_TOOL_RESULT))
    return (
        node_in,
        node_out,
        n.INPUT_VALUE in a or node_in is not None,
        n.OUTPUT_VALUE in a or node_out is not None,
    )


def _usage(a: dict[str, Any]) -> dict[str, Any] | None:
    def num(*keys: str) -> int | None:
        for key in keys:
            value = a.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    usage: dict[str, Any] = {}
    prompt = num(n.TOKENS_PROMPT, n.GENAI_INPUT_TOKENS, n.GENAI_PROMPT_TOKENS)
    completion = num(n.TOKENS_COMPLETION, n.GENAI_OUTPUT_TOKENS, n.GENAI_COMPLETION_TOKENS)
    total = num(n.TOKENS_TOTAL)
    if total is None and n.TOKENS_PROMPT not in a and prompt is not None and completion is not None:
        total = prompt + completion  # GenAI has no total: the sum
    for key, value in (("inputTokens", prompt), ("outputTokens", completion), ("totalTokens", total)):
        if value is not None:
            usage[key] = value
    return usage or None


def _cost(a: dict[str, Any]) -> dict[str, Any] | None:
    cost = {}
    for ours, theirs in (("total", n.COST_TOTAL), ("input", n.COST_PROMPT), ("output", n.COST_COMPLETION)):
        value = a.get(theirs, a.get(n.GENAI_COST) if ours == "total" else None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            cost[ours] = value
    return cost or None


def _error(span: Span) -> dict[str, Any] | None:
    for name, _, fields in span.events:
        if name == n.EXCEPTION_EVENT:
            return {
                "name": _text_of(fields.get(n.EXCEPTION_TYPE)) or "Error",
                "message": _text_of(fields.get(n.EXCEPTION_MESSAGE)) or span.status_message,
                "stack": _text_of(fields.get(n.EXCEPTION_STACKTRACE)),
            }
    if span.status_code == STATUS_ERROR:
        name = _str(span.attrs.get(n.ERROR_TYPE)) or "Error"
        message = span.status_message
        if message.startswith(name + ": "):  # our own export writes "Name: message"
            message = message[len(name) + 2 :]
        elif ": " in message and name == "Error":
            name, message = message.split(": ", 1)
        return {"name": name, "message": message, "stack": ""}
    return None


def _text_of(value: Any) -> str:
    return clean_text(value) if isinstance(value, str) else ""


def _attrs(span: Span, kind: str) -> dict[str, Any]:
    a = span.attrs
    if n.GM_ATTRS in a:  # ours, as the app sent them
        ours = _json_or_text(a[n.GM_ATTRS])
        if isinstance(ours, dict):
            return ours
    out: dict[str, Any] = {}
    model = _model(a)
    if model is not None and kind in ("llm", "embedding"):
        out["model"] = model
    call_id = _str(a.get(n.TOOL_CALL_ID)) or _str(a.get(n.GENAI_TOOL_CALL_ID))
    if call_id is not None and kind == "tool":
        out["toolCallId"] = call_id
    otel: dict[str, Any] = {"span": span.name, "scope": span.scope}
    adapter = gated_by(span.scope, a)
    if adapter is not None:
        otel["gatedBy"] = adapter
    otel["attributes"] = {
        k: v for k, v in a.items() if not messages.consumed(k) and not k.startswith("graphmind.")
    }
    out["otel"] = otel
    return out


def _agent_root(span: Span) -> bool:
    if n.GM_RUN_ID in span.attrs:
        return True
    kind = span.attrs.get(n.SPAN_KIND)
    if isinstance(kind, str):
        return kind.upper() == "AGENT"
    return span.attrs.get(n.GENAI_OPERATION) in ("invoke_agent", "create_agent")


def _run_events(span: Span, rid: str, agent: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    a = span.attrs
    name = classify(span)[1] if agent else span.name
    if agent and n.GM_RUN_ID in a:
        name = span.name
    name = name or span.service
    meta = _json_or_text(a.get(n.METADATA))
    meta = dict(meta) if isinstance(meta, dict) else {}
    source: dict[str, Any] = {"traceId": span.trace_id, "service": span.service, "scope": span.scope}
    adapter = gated_by(span.scope, a)
    if adapter is not None:
        source["gatedBy"] = adapter
    meta["otlp"] = source
    started: dict[str, Any] = {
        "type": "run.started",
        "ts": _ms(span.start_ns),
        "runId": rid,
        "name": name,
        "app": span.service,
        "nodeId": f"agent:{name}",
        "instanceId": span.span_id if agent else rid,
        "kind": "agent",
        "meta": meta,
        "implicit": False,
    }
    error = _error(span)
    finished: dict[str, Any] = {
        "type": "run.finished",
        "ts": _ms(span.end_ns),
        "runId": rid,
        "status": "error" if error is not None else "finished",
        "durationMs": round(_ms(span.end_ns - span.start_ns), 2),
    }
    if error is not None:
        finished["error"] = error
    if agent:
        node_in, node_out, has_in, has_out = _io(span, "agent")
        if has_in:
            started["input"] = node_in
        if has_out:
            finished["output"] = node_out
    return started, finished


def _node_events(span: Span, rid: str, parent: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    kind, name, node_id = classify(span)
    node_in, node_out, _, has_out = _io(span, kind)
    started: dict[str, Any] = {
        "type": "node.started",
        "ts": _ms(span.start_ns),
        "runId": rid,
        "nodeId": node_id,
        "instanceId": span.span_id,
        "kind": kind,
        "name": name,
        "parentInstanceId": parent,
        "input": node_in,
        "attrs": _attrs(span, kind),
    }
    error = _error(span)
    held = span.attrs.get(n.GM_HELD_MS)
    ended: dict[str, Any] = {
        "type": "node.error" if error is not None else "node.finished",
        "ts": _ms(span.end_ns),
        "runId": rid,
        "nodeId": node_id,
        "instanceId": span.span_id,
        "durationMs": round(_ms(span.end_ns - span.start_ns), 2),
        "heldMs": float(held) if isinstance(held, (int, float)) and not isinstance(held, bool) else 0.0,
    }
    if error is not None:
        ended["error"] = error
    else:
        if has_out:
            ended["output"] = node_out
        usage = _usage(span.attrs)
        if usage is not None:
            ended["usage"] = usage
        cost = _cost(span.attrs)
        if cost is not None:
            ended["cost"] = cost
        for ours, key in (("injected", n.GM_INJECTED), ("cutShort", n.GM_CUT_SHORT)):
            if span.attrs.get(key) is True:
                ended[ours] = True
    return started, ended


def events(span: Span) -> list[tuple[float, int, dict[str, Any]]]:
    """The span's events as (ts, order at equal ts, event), without `seq`."""
    rid = run_id(span.trace_id)
    if not span.is_root:
        started, ended = _node_events(span, rid, span.parent_id)
        return [(started["ts"], STARTED, started), (ended["ts"], FINISHED, ended)]
    agent = _agent_root(span)
    run_started, run_finished = _run_events(span, rid, agent)
    out = [(run_started["ts"], STARTED - 1, run_started)]
    if not agent:  # a lone call: a node of its own under the run's agent node
        started, ended = _node_events(span, rid, rid)
        out += [(started["ts"], STARTED, started), (ended["ts"], FINISHED, ended)]
    out.append((run_finished["ts"], FINISHED + 1, run_finished))
    return out
