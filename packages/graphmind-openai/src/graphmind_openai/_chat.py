"""Chat Completions (`/chat/completions`): its row of the API table (`_apis.py`), as plain functions.

Describe a request and a reply (a body, or the SDK's own object), build the full body and its SSE
rendering for an injected value, and read a stream (SSE bytes or the SDK's decoded chunks).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from graphmind.adapter import json_scalar, parse_model_reply, plain_message
from graphmind.adapter.stainless import request_message

from ._common import (
    StreamState,
    owned_reply,
    request_input,
    split,
    sse,
    text_of,
    usage_of,
)

NAME = "chat.completions"


def _message(message: Any) -> Any:
    if not isinstance(message, Mapping):
        return message
    out: dict[str, Any] = {"role": message.get("role"), "content": text_of(message.get("content"))}
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = [_tool_call(c) for c in calls]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    if message.get("name"):
        out["name"] = message["name"]
    return out


def _tool_call(call: Any) -> Any:
    if not isinstance(call, Mapping):
        return call
    fn = call.get("function") or {}
    return {"id": call.get("id"), "name": fn.get("name"), "arguments": fn.get("arguments")}


def describe_request(body: Mapping[str, Any]) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length) of a Chat Completions request body."""
    messages = body.get("messages") or []
    if not isinstance(messages, list | tuple):
        messages = ()
    trimmed: list[Any] = []
    owned = True  # every message is one `_message` built, of plain leaves (`plain_message`)
    for m in messages:
        if type(m) is dict and len(m) == 2:
            # `{"role": str, "content": str}`, nearly every message: `_message` of it, inlined
            role = m.get("role")
            content = m.get("content")
            if type(role) is str and type(content) is str:
                trimmed.append({"role": role, "content": content})
                if owned and not (role.isascii() and content.isascii()):
                    owned = json_scalar(role) and json_scalar(content)
                continue
        out = _message(m)
        trimmed.append(out)
        owned = owned and plain_message(out)
    return request_input(body, trimmed, trimmed[0] if trimmed else None, owned=owned)


def describe_reply(data: Any) -> tuple[Any, dict[str, Any] | None]:
    """(node output, usage) of a chat.completion body; (data, None) for anything else."""
    if not isinstance(data, Mapping):
        return data, None
    choices = data.get("choices") or []
    out: dict[str, Any] = {}
    if choices and isinstance(choices[0], Mapping):
        first = choices[0]
        out = _message(first.get("message") or {})
        out["finish_reason"] = first.get("finish_reason")
    if len(choices) > 1:
        out["choices"] = len(choices)
    if data.get("model"):
        out["model"] = data["model"]
    return owned_reply(out, usage_of(data.get("usage")))


def describe_model(obj: Any) -> tuple[Any, dict[str, Any] | None] | None:
    """(output, usage) read off the SDK's own `ChatCompletion` (or `ParsedChatCompletion`) without
    re-decoding the body; None for anything else (raw responses)."""
    usage = getattr(obj, "usage", None)
    choices = getattr(obj, "choices", None)
    if not isinstance(choices, list):
        return None
    out: dict[str, Any] = {}
    if choices:
        message = choices[0].message
        out = {"role": message.role, "content": message.content}
        if message.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                if c.type == "function"
                else {"id": c.id, "type": c.type}
                for c in message.tool_calls
            ]
        out["finish_reason"] = choices[0].finish_reason
    if len(choices) > 1:
        out["choices"] = len(choices)
    out["model"] = obj.model
    tokens = None
    if usage is not None:
        tokens = {
            "inputTokens": usage.prompt_tokens,
            "outputTokens": usage.completion_tokens,
            "totalTokens": usage.total_tokens,
        }
    return owned_reply(out, tokens)


# ---- an injected value -------------------------------------------------------------------------


def _reply_message(value: Any) -> dict[str, Any]:
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


def edit_message(message: Any) -> Any:
    """A message of an edited input (its described shape) as a request message: an assistant turn
    with tool calls goes through the inject conversion above (the one JSON -> OpenAI shape)."""
    if isinstance(message, Mapping) and message.get("role") == "assistant" and message.get("tool_calls"):
        return _reply_message({k: message[k] for k in ("role", "content", "tool_calls") if k in message})
    return request_message(message)


def to_body(value: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    """The full chat.completion body for an injected value; raises on a value of the wrong shape."""
    model = str(request.get("model") or "unknown")
    if isinstance(value, Mapping) and "choices" in value:
        body = dict(value)
    else:  # the one model-reply shape; anything else raises ValueError there
        message = _reply_message(value)
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


def to_sse(body: Mapping[str, Any], pieces: int = 1, usage: bool = True) -> bytes:
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
    return sse(events)


# ---- a stream ---------------------------------------------------------------------------------------


def on_sse(state: StreamState, chunk: dict[str, Any]) -> None:
    """One chat.completion.chunk read from the SSE bytes."""
    ex = state.ex
    if not state.head:
        state.head = {k: chunk.get(k) for k in ("id", "model", "created")}
    if chunk.get("usage"):
        state.usage = chunk["usage"]
    for choice in chunk.get("choices") or ():
        if choice.get("index", 0) != 0:
            continue  # n > 1: the node shows the first choice
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if content:
            state.text.append(content)
            ex.token(content)
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            ex.token(reasoning, "reasoning")
        for call in delta.get("tool_calls") or ():
            index = call.get("index", 0)
            slot = state.calls.setdefault(index, {"id": None, "name": None, "arguments": ""})
            fn = call.get("function") or {}
            if call.get("id"):
                slot["id"] = call["id"]
            if fn.get("name"):
                slot["name"] = fn["name"]
            args = fn.get("arguments")
            if args:
                slot["arguments"] += args
                ex.token(args, "tool-args", toolCallId=slot["id"], toolName=slot["name"])
        if choice.get("finish_reason"):
            state.finish = choice["finish_reason"]


def on_item(state: StreamState, chunk: Any) -> None:
    """One `ChatCompletionChunk` the SDK decoded."""
    ex = state.ex
    if not state.head:
        state.head = {"id": chunk.id, "model": chunk.model, "created": chunk.created}
    usage = chunk.usage
    if usage is not None:
        state.usage = {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        }
    for choice in chunk.choices:
        if choice.index != 0:
            continue
        delta = choice.delta
        content = delta.content
        if content:
            state.text.append(content)
            ex.token(content)
        calls = delta.tool_calls
        if calls:
            for call in calls:
                slot = state.calls.setdefault(call.index, {"id": None, "name": None, "arguments": ""})
                if call.id:
                    slot["id"] = call.id
                fn = call.function
                if fn is not None:
                    if fn.name:
                        slot["name"] = fn.name
                    if fn.arguments:
                        slot["arguments"] += fn.arguments
                        ex.token(fn.arguments, "tool-args", toolCallId=slot["id"], toolName=slot["name"])
        if choice.finish_reason:
            state.finish = choice.finish_reason
            state.complete = True


def stream_body(state: StreamState) -> Any:
    """The chat.completion body assembled from the chunks read."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(state.text) if state.text else None,
    }
    if state.calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for _, c in sorted(state.calls.items())
        ]
    return {
        **state.head,
        "choices": [{"index": 0, "message": message, "finish_reason": state.finish}],
        "usage": state.usage,
    }
