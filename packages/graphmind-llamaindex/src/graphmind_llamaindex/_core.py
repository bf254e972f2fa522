"""What this adapter uses of graphmind-core's adapter contract, in one place.

`graphmind.adapter` (core's public module for adapters) provides the model-reply parser. Until a
core without it is no longer supported, a minimal reader of the same shape stands in.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

try:
    from graphmind.adapter import parse_model_reply
except ImportError:  # graphmind-core before the adapter module

    @dataclass(frozen=True)
    class _Call:
        id: str
        name: str
        arguments: dict[str, Any]

    @dataclass(frozen=True)
    class _Reply:
        content: str | None
        tool_calls: list[_Call] = field(default_factory=list)

    _SHAPE = 'a model reply is a string, or {"content": "..." or null, "tool_calls": [{"id"?, "name", "arguments"}]}'

    def _arguments(call: Mapping[str, Any]) -> dict[str, Any]:
        raw = call.get("arguments", call.get("args")) or {}
        if isinstance(raw, str):
            try:
                raw = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as exc:
                raise ValueError(f"{_SHAPE}; arguments is not valid JSON ({exc})") from None
        if not isinstance(raw, dict):
            raise ValueError(f"{_SHAPE}; arguments is a {type(raw).__name__}, not an object")
        return raw

    def parse_model_reply(value: Any) -> Any:  # type: ignore[misc]
        if isinstance(value, str):
            return _Reply(value, [])
        if not isinstance(value, Mapping) or not ({"content", "tool_calls"} & set(value)):
            raise ValueError(f"{_SHAPE}; got {value!r:.80}")
        content = value.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"{_SHAPE}; content is a {type(content).__name__}")
        calls = []
        for call in value.get("tool_calls") or []:
            if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
                raise ValueError(f"{_SHAPE}; each tool call needs a name")
            calls.append(
                _Call(call.get("id") or f"call_{uuid.uuid4().hex[:12]}", call["name"], _arguments(call))
            )
        return _Reply(content, calls)


__all__ = ["parse_model_reply"]
