"""Responses (`/responses`): its row of the API table (`_apis.py`), as plain functions.

Describe a request and a reply (a body, or the SDK's own object), build the full body and its SSE
rendering (the coherent event sequence the SDK's stream helpers check) for an injected value, and
read a stream (SSE bytes or the SDK's decoded events).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from graphmind.adapter import parse_model_reply, plain_message

from ._common import (
    StreamState,
    owned_reply,
    request_input,
    split,
    sse,
    text_of,
    usage_of,
)
from ._provider_tools import is_hosted, observe

NAME = "responses"


def _item(item: Any) -> Any:
    if not isinstance(item, Mapping):
        return item
    kind = item.get("type", "message")
    if kind == "message" or "role" in item:
        return {"role": item.get("role"), "content": text_of(item.get("content"))}
    if kind == "function_call":
        return {
            "type": kind,
            "call_id": item.get("call_id"),
            "name": item.get("name"),
            "arguments": item.get("arguments"),
        }
    if kind == "function_call_output":
        return {"type": kind, "call_id": item.get("call_id"), "output": text_of(item.get("output"))}
    return {"type": kind}


def describe_request(body: Mapping[str, Any]) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length) of a Responses request body."""
    raw = body.get("input")
    if isinstance(raw, str):
        trimmed = [{"role": "user", "content": raw}]
    elif isinstance(raw, list | tuple):
        trimmed = [_item(i) for i in raw]
    else:
        trimmed = []
    instructions = body.get("instructions")
    first = {"instructions": instructions, "first": trimmed[0] if trimmed else None}
    owned = all(plain_message(m) for m in trimmed)  # items `_item` built (an app's is always copied)
    return request_input(body, trimmed, first, instructions, owned=owned)


def describe_reply(data: Any) -> tuple[Any, dict[str, Any] | None]:
    """(node output, usage) of a Response body; (data, None) for anything else."""
    if not isinstance(data, Mapping):
        return data, None
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in data.get("output") or []:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, Mapping) and part.get("type") == "output_text":
                    text.append(part.get("text") or "")
        elif item.get("type") == "function_call":
            calls.append(
                {"id": item.get("call_id"), "name": item.get("name"), "arguments": item.get("arguments")}
            )
    reply: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        reply["tool_calls"] = calls
    reply["status"] = data.get("status")
    if data.get("model"):
        reply["model"] = data["model"]
    return owned_reply(reply, usage_of(data.get("usage")))


def describe_model(obj: Any) -> tuple[Any, dict[str, Any] | None] | None:
    """(output, usage) read off the SDK's own `Response` (or `ParsedResponse`); None for anything else."""
    usage = getattr(obj, "usage", None)
    output = getattr(obj, "output", None)
    if not isinstance(output, list):
        return None
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in output:
        kind = getattr(item, "type", None)
        if kind == "message":
            text.extend(part.text for part in item.content if getattr(part, "type", None) == "output_text")
        elif kind == "function_call":
            calls.append({"id": item.call_id, "name": item.name, "arguments": item.arguments})
    reply: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        reply["tool_calls"] = calls
    reply["status"] = obj.status
    reply["model"] = obj.model
    tokens = None
    if usage is not None:
        tokens = {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "totalTokens": usage.total_tokens,
        }
    return owned_reply(reply, tokens)


# ---- an injected value -------------------------------------------------------------------------


def _output(value: Any) -> list[dict[str, Any]]:
    """The one model-reply shape (docs/protocol.md) as a Response's output items."""
    reply = parse_model_reply(value)
    output: list[dict[str, Any]] = []
    if reply.content is not None:
        output.append(
            {
                "type": "message",
                "id": f"msg_gm{uuid.uuid4().hex[:16]}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.content, "annotations": []}],
            }
        )
    for i, call in enumerate(reply.tool_calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_gm{i}{uuid.uuid4().hex[:8]}",
                "call_id": call.id,
                "name": call.name,
                "arguments": json.dumps(call.arguments),
                "status": "completed",
            }
        )
    return output


def to_body(value: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    """The full Response body for an injected value; raises on a value of the wrong shape."""
    full = isinstance(value, Mapping) and "output" in value  # a whole Response body, else the one reply shape
    body = dict(value) if full else {"output": _output(value)}
    body.setdefault("id", f"resp_gm{uuid.uuid4().hex[:16]}")
    body.setdefault("object", "response")
    body.setdefault("created_at", int(time.time()))
    body.setdefault("model", request.get("model") or "unknown")
    body.setdefault("status", "completed")
    body.setdefault("parallel_tool_calls", True)
    body.setdefault("tool_choice", "auto")
    body.setdefault("tools", [])
    from openai.types.responses import Response

    Response.model_validate(body)
    return body


def to_sse(body: Mapping[str, Any], pieces: int = 1) -> bytes:
    """A Response body as the coherent Responses event sequence the SDK's stream helpers expect:
    created -> per item (output_item.added -> content_part.added -> deltas -> done events) -> completed."""
    seq = iter(range(1_000_000))
    events: list[tuple[str | None, Any]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": next(seq), **data}))

    start = {**body, "status": "in_progress", "output": []}
    start.pop("usage", None)
    emit("response.created", response=start)
    for index, item in enumerate(body.get("output") or []):
        kind = item.get("type")
        item_id = item.get("id") or f"item_gm{index}"
        if kind == "message":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            for c, part in enumerate(item.get("content") or []):
                if part.get("type") != "output_text":
                    continue
                emit(
                    "response.content_part.added",
                    item_id=item_id,
                    output_index=index,
                    content_index=c,
                    part={**part, "text": ""},
                )
                for delta in split(part.get("text", ""), pieces):
                    emit(
                        "response.output_text.delta",
                        item_id=item_id,
                        output_index=index,
                        content_index=c,
                        delta=delta,
                        logprobs=[],
                    )
                emit(
                    "response.output_text.done",
                    item_id=item_id,
                    output_index=index,
                    content_index=c,
                    text=part.get("text", ""),
                    logprobs=[],
                )
                emit(
                    "response.content_part.done",
                    item_id=item_id,
                    output_index=index,
                    content_index=c,
                    part=part,
                )
        elif kind == "function_call":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for delta in split(item.get("arguments", ""), pieces):
                emit(
                    "response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=delta
                )
            emit(
                "response.function_call_arguments.done",
                item_id=item_id,
                output_index=index,
                arguments=item.get("arguments", ""),
                name=item.get("name"),
            )
        else:
            emit("response.output_item.added", output_index=index, item=item)
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=dict(body))
    return sse(events)


# ---- a stream ---------------------------------------------------------------------------------------


def on_sse(state: StreamState, event: dict[str, Any]) -> None:
    """One Responses event read from the SSE bytes."""
    ex = state.ex
    kind = event.get("type")
    if kind == "response.output_text.delta":
        ex.token(event.get("delta") or "")
    elif kind == "response.function_call_arguments.delta":
        item = state.items.get(event.get("item_id") or "", {})
        ex.token(
            event.get("delta") or "",
            "tool-args",
            toolCallId=item.get("call_id"),
            toolName=item.get("name"),
        )
    elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
        ex.token(event.get("delta") or "", "reasoning")
    elif kind in ("response.output_item.added", "response.output_item.done"):
        item = event.get("item") or {}
        if item.get("id"):
            state.items[item["id"]] = item
        if kind == "response.output_item.done" and is_hosted(item):
            observe(state.engine, ex, [item])  # a provider-executed tool: an ungated child node, now
    elif kind in ("response.created", "response.in_progress"):
        state.final = state.final or event.get("response")
    elif kind in ("response.completed", "response.failed", "response.incomplete"):
        state.final = event.get("response")
        state.complete = True


def on_item(state: StreamState, event: Any) -> None:
    """One Responses event the SDK decoded."""
    ex = state.ex
    kind = event.type
    if kind == "response.output_text.delta":
        state.text.append(event.delta)
        ex.token(event.delta)
    elif kind == "response.function_call_arguments.delta":
        item = state.items.get(event.item_id, {})
        ex.token(event.delta, "tool-args", toolCallId=item.get("call_id"), toolName=item.get("name"))
    elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
        ex.token(event.delta, "reasoning")
    elif kind in ("response.output_item.added", "response.output_item.done"):
        item = event.item
        if kind == "response.output_item.done" and is_hosted(item):
            observe(state.engine, ex, [item])  # a provider-executed tool: an ungated child node, now
        if item.type == "function_call":
            entry = {
                "type": "function_call",
                "call_id": item.call_id,
                "name": item.name,
                "arguments": item.arguments,
            }
            if item.id:
                state.items[item.id] = entry
            if kind == "response.output_item.done":
                state.out_calls.append(entry)
    elif kind in ("response.completed", "response.failed", "response.incomplete"):
        response = event.response
        state.status, state.model = response.status, response.model
        usage = response.usage
        if usage is not None:
            state.usage = {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "total_tokens": usage.total_tokens,
            }
        state.complete = True


def stream_body(state: StreamState) -> Any:
    """The Response body assembled from the events read."""
    final = dict(state.final or {})
    if not final.get("output") and state.items:
        final["output"] = list(state.items.values())
    return final


def typed_body(state: StreamState) -> Any:
    """The Response body assembled from the SDK's decoded events."""
    output: list[dict[str, Any]] = []
    if state.text:
        output.append({"type": "message", "content": [{"type": "output_text", "text": "".join(state.text)}]})
    output.extend(state.out_calls)
    return {"output": output, "status": state.status, "model": state.model, "usage": state.usage}
