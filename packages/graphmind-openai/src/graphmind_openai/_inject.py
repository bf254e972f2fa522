"""An injected value -> the response body the provider would have sent -> a synthetic HTTP response.

The SDK then builds its own object from it (`ChatCompletion`, `ParsedChatCompletion`, `Response`,
`LegacyAPIResponse`, `Stream`, ...), exactly as it does from a real reply: nothing here
constructs an SDK type for the app. A value in core's one model-reply shape (a string, or
`{"content": ..., "tool_calls": [...]}`, read by `graphmind.adapter.parse_model_reply`) injects an
assistant reply; an object with `choices` (Chat Completions) or `output` (Responses) is a full body.

Streams: the same body is rendered as the SSE event sequence the provider sends, so the SDK's
stream helpers (`.stream()`, which check event order) accept it.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graphmind.adapter import parse_model_reply

from ._describe import CHAT


@dataclass
class Reply:
    """A response to hand the SDK instead of sending the request: status, headers, body bytes."""

    content: bytes
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    described: Any = None  # (output, usage) of an injected body, for the node

    def build(self, request: Any) -> Any:
        """An httpx2 (or legacy httpx, when the app passed `http_client=httpx.Client()`) Response."""
        module = sys.modules[type(request).__module__.split(".")[0]]
        return module.Response(self.status, headers=self.headers, content=self.content, request=request)


# ---- an injected value as a complete response body ------------------------------------------------


def _chat_message(value: Any) -> dict[str, Any]:
    """The one model-reply shape (docs/protocol.md) as a chat.completion message."""
    reply = parse_model_reply(value)
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in reply.tool_calls
        ]
    return message


def chat_body(value: Any, model: str) -> dict[str, Any]:
    if isinstance(value, Mapping) and "choices" in value:
        body = dict(value)
    else:  # the one model-reply shape; anything else raises ValueError there
        message = _chat_message(value)
        body = {
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    "logprobs": None,
                }
            ]
        }
    body.setdefault("id", f"chatcmpl-gm{uuid.uuid4().hex[:16]}")
    body.setdefault("object", "chat.completion")
    body.setdefault("created", int(time.time()))
    body.setdefault("model", model)
    from openai.types.chat import ChatCompletion

    ChatCompletion.model_validate(body)  # a bad shape raises here: the engine holds the gate again
    return body


def _responses_output(value: Any) -> list[dict[str, Any]]:
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


def responses_body(value: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(value, Mapping) and "output" in value:
        body = dict(value)
    else:
        body = {"output": _responses_output(value)}
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


def to_body(api: str, value: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    """The full response body for an injected value; raises on a value of the wrong shape."""
    if api == CHAT:
        return chat_body(value, str(request.get("model") or "unknown"))
    return responses_body(value, request)


# ---- a body as the bytes the provider sends -----------------------------------------------------------


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    out: list[str] = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        out.append(f"event: {name}\ndata: {text}\n\n" if name else f"data: {text}\n\n")
    return "".join(out).encode()


def split(text: str, pieces: int) -> list[str]:
    """`text` in about `pieces` consecutive parts (a provider streams a reply in many small deltas)."""
    if pieces <= 1 or len(text) <= 1:
        return [text]
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


def chat_sse(body: Mapping[str, Any], pieces: int = 1, usage: bool = True) -> bytes:
    """A chat.completion body as `chat.completion.chunk` events ending in `data: [DONE]`."""
    base = {
        "id": body["id"],
        "object": "chat.completion.chunk",
        "created": body["created"],
        "model": body["model"],
    }
    events: list[tuple[str | None, Any]] = []
    for choice in body.get("choices") or []:
        index = choice.get("index", 0)
        message = choice.get("message") or {}

        def chunk(delta: dict[str, Any], finish: Any = None, index: int = index) -> dict[str, Any]:
            return {**base, "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}

        events.append((None, chunk({"role": "assistant", "content": ""})))
        if message.get("content"):
            events.extend((None, chunk({"content": part})) for part in split(message["content"], pieces))
        for i, call in enumerate(message.get("tool_calls") or []):
            fn = call.get("function") or {}
            events.append(
                (
                    None,
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": i,
                                    "id": call.get("id"),
                                    "type": "function",
                                    "function": {"name": fn.get("name"), "arguments": ""},
                                }
                            ]
                        }
                    ),
                )
            )
            for part in split(fn.get("arguments") or "", pieces):
                if part:
                    events.append(
                        (None, chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]}))
                    )
        events.append((None, chunk({}, choice.get("finish_reason") or "stop")))
    if usage and body.get("usage"):
        events.append((None, {**base, "choices": [], "usage": body["usage"]}))
    events.append((None, "[DONE]"))
    return _sse(events)


def responses_sse(body: Mapping[str, Any], pieces: int = 1) -> bytes:
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
    return _sse(events)


def reply_for(api: str, body: Mapping[str, Any], stream: bool) -> Reply:
    """The synthetic HTTP reply carrying `body` (JSON, or SSE when the call streams)."""
    if stream:
        content = chat_sse(body) if api == CHAT else responses_sse(body)
        return Reply(content, headers=[("content-type", "text/event-stream")])
    return Reply(json.dumps(body).encode(), headers=[("content-type", "application/json")])
