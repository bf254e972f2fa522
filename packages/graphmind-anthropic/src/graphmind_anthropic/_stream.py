"""A Messages stream as it is read: `MessageReader` assembles the reply as a `Message` body from the
events (message_start, content_block_start / _delta / _stop, message_delta, message_stop), whether
they come as JSON off the SSE bytes (raw shapes) or as the SDK's own typed events (its `Stream`,
which `create(stream=True)` returns and `messages.stream()` iterates), and sends text, tool-input and
thinking deltas to the debugger as `node.token`. The tees around it, and how the stream ends, are
the Stainless layer's (`graphmind.adapter.stainless`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from graphmind.adapter import Engine, NodeExecution

_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _usage(usage: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in _USAGE_KEYS:
        value = getattr(usage, key, None)
        if value is not None:
            out[key] = value
    return out


class MessageReader:
    """What a Messages stream has said so far (the Stainless layer's `StreamReader`)."""

    def __init__(self, ex: NodeExecution, engine: Engine | None = None) -> None:
        self.ex = ex
        self.complete = False  # message_stop arrived: the reply is whole
        self._head: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._stop: Any = None
        self._usage: dict[str, Any] = {}

    # ---- events in (dicts) ---------------------------------------------------------------------
    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            self.delta(event.get("index", 0), delta.get("type"), delta)
        elif kind == "content_block_start":
            self._blocks[event.get("index", 0)] = dict(event.get("content_block") or {})
        elif kind == "message_start":
            message = event.get("message") or {}
            self._head = {k: message.get(k) for k in ("id", "model", "role")}
            self._usage.update({k: v for k, v in (message.get("usage") or {}).items() if v is not None})
        elif kind == "message_delta":
            self._stop = (event.get("delta") or {}).get("stop_reason")
            self._usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            self.complete = True

    # ---- events in (the SDK's types) -----------------------------------------------------------
    def item(self, event: Any) -> None:
        kind = event.type
        if kind == "content_block_delta":
            delta = event.delta
            self.delta(event.index, delta.type, delta)
        elif kind == "content_block_start":
            block = event.content_block
            entry: dict[str, Any] = {"type": block.type}
            if block.type in ("tool_use", "server_tool_use"):
                entry.update(id=block.id, name=block.name, input={})
            elif block.type == "text":
                entry["text"] = block.text
            elif block.type == "thinking":
                entry["thinking"] = block.thinking
            self._blocks[event.index] = entry
        elif kind == "message_start":
            message = event.message
            self._head = {"id": message.id, "model": message.model, "role": message.role}
            self._usage.update(_usage(message.usage))
        elif kind == "message_delta":
            self._stop = event.delta.stop_reason
            self._usage.update(_usage(event.usage))
        elif kind == "message_stop":
            self.complete = True

    def delta(self, index: int, kind: Any, delta: Any) -> None:
        """One content_block_delta; `delta` is a dict or the SDK's typed delta."""
        get: Callable[[str], Any] = (
            delta.get if isinstance(delta, dict) else lambda k: getattr(delta, k, None)
        )
        block = self._blocks.setdefault(index, {"type": "text", "text": ""})
        if kind == "text_delta":
            text = get("text") or ""
            block["text"] = (block.get("text") or "") + text
            self.ex.token(text)
        elif kind == "input_json_delta":
            part = get("partial_json") or ""
            self._json.setdefault(index, []).append(part)
            if part:
                self.ex.token(part, "tool-args", toolCallId=block.get("id"), toolName=block.get("name"))
        elif kind == "thinking_delta":
            text = get("thinking") or ""
            block["thinking"] = (block.get("thinking") or "") + text
            self.ex.token(text, "reasoning")

    # ---- what the node shows -------------------------------------------------------------------
    def body(self) -> Any:
        """The reply as a Message body assembled from what was read."""
        content = []
        for index, block in sorted(self._blocks.items()):
            parts = self._json.get(index)
            if parts is not None:
                try:
                    block = {**block, "input": json.loads("".join(parts) or "{}")}
                except ValueError:  # cut short mid-arguments: show what arrived
                    block = {**block, "input": "".join(parts)}
            content.append(block)
        return {**self._head, "content": content, "stop_reason": self._stop, "usage": self._usage or None}

    typed_body = body
