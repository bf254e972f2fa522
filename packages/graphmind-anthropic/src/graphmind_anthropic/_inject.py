"""An injected value -> the `Message` body Anthropic would have sent -> a synthetic HTTP response.

The SDK then builds its own object from it (`Message`, `BetaMessage`, `ParsedMessage`,
`LegacyAPIResponse`, `Stream`, `MessageStream`, ...), exactly as it does from a real reply: nothing
here constructs an SDK type for the app. A value is core's one model-reply shape (a string, or
`{"content": "...", "tool_calls": [{"id"?, "name", "arguments" | "args"}]}`, read by
`graphmind.adapter.parse_model_reply`) or Anthropic's own body (`{"content": [content blocks], ...}`, e.g. what the node's output was copied from).

Streams: the same body is rendered as the event sequence the API sends (message_start,
content_block_start / _delta / _stop per block, message_delta, message_stop), so the SDK's stream
helper (`messages.stream()`, which accumulates the events into a snapshot) accepts it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from graphmind.adapter import parse_model_reply
from graphmind.adapter.stainless import split, sse

# ---- an injected value as a complete Message body --------------------------------------------------


def _blocks(value: Any) -> list[dict[str, Any]]:
    """Core's one model-reply shape (docs/protocol.md, read by `parse_model_reply`) as content blocks."""
    reply = parse_model_reply(value)  # anything else raises ValueError naming the accepted shape
    blocks: list[dict[str, Any]] = []
    if reply.content is not None:
        blocks.append({"type": "text", "text": reply.content, "citations": None})
    for call in reply.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    if not blocks:
        raise ValueError("an injected reply needs content or tool_calls")
    return blocks


def message_body(value: Any, request: Mapping[str, Any], message_cls: type | None = None) -> dict[str, Any]:
    """The full `Message` body for an injected value; raises on a value of the wrong shape.

    `message_cls` validates the result (the SDK's `Message`, or `BetaMessage` for the beta namespace),
    so a bad shape raises here and the engine holds the gate again."""
    if isinstance(value, Mapping) and isinstance(value.get("content"), list):
        body = dict(value)  # Anthropic's own body (content blocks)
    else:
        body = {"content": _blocks(value)}
    has_tool_use = any(isinstance(b, Mapping) and b.get("type") == "tool_use" for b in body["content"])
    body.setdefault("id", f"msg_gm{uuid.uuid4().hex[:20]}")
    body.setdefault("type", "message")
    body.setdefault("role", "assistant")
    body.setdefault("model", str(request.get("model") or "unknown"))
    body.setdefault("stop_reason", "tool_use" if has_tool_use else "end_turn")
    body.setdefault("stop_sequence", None)
    body.setdefault("usage", {"input_tokens": 0, "output_tokens": 0})
    validator: Any = message_cls
    if validator is None:
        from anthropic.types import Message

        validator = Message
    validator.model_validate(body)
    return body


# ---- a body as the bytes the API sends ---------------------------------------------------------------


def _block_events(index: int, block: Mapping[str, Any], pieces: int) -> list[dict[str, Any]]:
    kind = block.get("type")
    events: list[dict[str, Any]] = []

    def delta(d: dict[str, Any]) -> None:
        events.append({"type": "content_block_delta", "index": index, "delta": d})

    if kind == "text":
        events.append({"type": "content_block_start", "index": index, "content_block": {**block, "text": ""}})
        for part in split(block.get("text") or "", pieces):
            if part:
                delta({"type": "text_delta", "text": part})
    elif kind in ("tool_use", "server_tool_use"):
        events.append(
            {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}}
        )
        arguments = json.dumps(block.get("input") or {}, separators=(",", ":"))
        for part in split(arguments, pieces):
            delta({"type": "input_json_delta", "partial_json": part})
    elif kind == "thinking":
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {**block, "thinking": "", "signature": ""},
            }
        )
        for part in split(block.get("thinking") or "", pieces):
            if part:
                delta({"type": "thinking_delta", "thinking": part})
        delta({"type": "signature_delta", "signature": block.get("signature") or ""})
    else:  # a block that arrives whole (redacted_thinking, server tool results, ...)
        events.append({"type": "content_block_start", "index": index, "content_block": dict(block)})
    events.append({"type": "content_block_stop", "index": index})
    return events


def message_sse(body: Mapping[str, Any], pieces: int = 1) -> bytes:
    """A Message body as the event sequence `messages.create(stream=True)` / `messages.stream()` read."""
    usage = dict(body.get("usage") or {"input_tokens": 0, "output_tokens": 0})
    start = {
        **body,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(body.get("content") or []):
        events.extend(_block_events(index, block, pieces))
    delta_usage = {
        k: usage.get(k)
        for k in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    }
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": body.get("stop_reason"), "stop_sequence": body.get("stop_sequence")},
            "usage": delta_usage,
        }
    )
    events.append({"type": "message_stop"})
    return sse([(event["type"], event) for event in events])
