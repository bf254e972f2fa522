"""The one injected-value shape for a model reply, parsed once for every adapter (docs/protocol.md,
"Injecting a model reply").

A person answering a model step's gate types the same thing whichever adapter made the node: a
string (the reply text), or `{"content": ..., "tool_calls": [{"id"?, "name", "arguments"}]}`.
Each adapter turns the parsed `ModelReply` into its framework's own type; anything else raises
`ValueError`, and the engine holds the gate again with a warning (nothing is lost).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._base.ids import random_hex

SHAPE = (
    'a model reply is a string, or {"content": "..." or null, '
    '"tool_calls": [{"id"?: "...", "name": "...", "arguments": {...} or "<JSON object>"}]}'
)
# What adapters add when they describe a reply (the node's recorded output): taken and ignored, so a
# recorded output injects (a replay, an inject box prefilled with the last output) as it was shown.
_DESCRIPTIVE_KEYS = frozenset({"finish_reason", "stop_reason", "stop_sequence", "model", "usage"})
_REPLY_KEYS = frozenset({"content", "tool_calls", "role"}) | _DESCRIPTIVE_KEYS
_CALL_KEYS = frozenset({"id", "name", "arguments", "args", "type", "function"})


@dataclass(frozen=True, slots=True)
class ToolCallReply:
    """One tool call of an injected model reply; `arguments` is always a JSON object here."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ModelReply:
    """An injected model reply: its text (None for a reply that only calls tools) and tool calls."""

    content: str | None
    tool_calls: list[ToolCallReply] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The reply as the node shows it (the same shape it was injected in)."""
        return {
            "content": self.content,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls],
        }


def _bad(detail: str) -> ValueError:
    return ValueError(f"{SHAPE}; {detail}")


def _arguments(call: Mapping[str, Any], index: int) -> dict[str, Any]:
    raw = call.get("arguments", call.get("args"))
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            raise _bad(f"tool call {index}'s arguments is not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise _bad(f"tool call {index}'s arguments is a {type(raw).__name__}, not an object")
    return raw


def _tool_call(call: Any, index: int) -> ToolCallReply:
    if not isinstance(call, Mapping):
        raise _bad(f"tool call {index} is a {type(call).__name__}, not an object")
    unknown = set(call) - _CALL_KEYS
    if unknown:
        raise _bad(f"tool call {index} has unknown keys {sorted(unknown)}")
    if "arguments" in call and "args" in call:
        raise _bad(f"tool call {index} has both arguments and args")
    function = call.get("function")
    if isinstance(function, Mapping):  # OpenAI's own message shape: {"id", "type", "function": {...}}
        merged = {"id": call.get("id"), **function}
        return _tool_call({k: v for k, v in merged.items() if v is not None}, index)
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise _bad(f"tool call {index} needs a name")
    call_id = call.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise _bad(f"tool call {index}'s id is a string")
    return ToolCallReply(call_id or f"call_{random_hex(48)}", name, _arguments(call, index))


def parse_model_reply(value: Any) -> ModelReply:
    """Reads an injected model reply; raises ValueError (with the accepted shape) on anything else."""
    if isinstance(value, str):
        return ModelReply(value, [])
    if not isinstance(value, Mapping):
        raise _bad(f"got a {type(value).__name__}")
    unknown = set(value) - _REPLY_KEYS
    if unknown:
        raise _bad(f"unknown keys {sorted(unknown)}")
    if value.get("role", "assistant") != "assistant":
        raise _bad("an injected reply's role is assistant")
    if "content" not in value and "tool_calls" not in value:
        raise _bad("give content, tool_calls or both")
    content = value.get("content")
    if content is not None and not isinstance(content, str):
        raise _bad(f"content is a {type(content).__name__}, not a string or null")
    calls = value.get("tool_calls")
    if calls is None:
        calls = []
    if not isinstance(calls, list):
        raise _bad("tool_calls is a list")
    return ModelReply(content, [_tool_call(call, i) for i, call in enumerate(calls)])
