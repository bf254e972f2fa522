"""What a node shows: a Strands model call and tool call as JSON.

Strands' messages are Bedrock Converse dicts (`{"role", "content": [block, ...]}`, strands/types/content.py),
each block one of `text`, `toolUse` (`toolUseId`, `name`, `input`), `toolResult` (`toolUseId`, `status`,
`content`), `image`, `reasoningContent`, ... A model step shows them as core's transcript (system,
user, assistant with `tool_calls`, tool): the shape every adapter's `llm:step` has, so the viewer, the
inject box and an edit read the same. A block with no place in that shape (an image, reasoning) is
shown by its kind in brackets, and `_edit.py` keeps the original message when it was not edited.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphmind.adapter import owned_copy


def json_value(value: Any) -> Any:
    """A fresh JSON-safe copy of a framework value (a tool's input or result): `owned_copy` for plain
    JSON, else a round trip through `json` with `str` for what it cannot encode."""
    copied, owned = owned_copy(value)
    if owned:
        return copied
    return json.loads(json.dumps(value, default=str))


def _text(blocks: Iterable[Mapping[str, Any]]) -> str | None:
    texts = [str(b["text"]) for b in blocks if isinstance(b.get("text"), str)]
    return "".join(texts) if texts else None


def _other_kinds(blocks: Iterable[Mapping[str, Any]]) -> list[str]:
    known = ("text", "toolUse", "toolResult")
    return [f"[{next(iter(b), 'block')}]" for b in blocks if not any(k in b for k in known)]


def tool_result_content(result: Mapping[str, Any]) -> Any:
    """A `ToolResult`'s content as one JSON value: its text when it is text only, else the blocks."""
    blocks = result.get("content") or []
    if all(isinstance(b, Mapping) and set(b) == {"text"} for b in blocks):
        return "".join(str(b["text"]) for b in blocks)
    if len(blocks) == 1 and isinstance(blocks[0], Mapping) and set(blocks[0]) == {"json"}:
        return json_value(blocks[0]["json"])
    return json_value(list(blocks))


def message(msg: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One Strands message as transcript messages (a user message of tool results is one `tool`
    message per result)."""
    role = str(msg.get("role"))
    blocks = [b for b in msg.get("content") or [] if isinstance(b, Mapping)]
    if role == "assistant":
        out: dict[str, Any] = {"role": "assistant", "content": _join(_text(blocks), _other_kinds(blocks))}
        calls = [tool_call(b["toolUse"]) for b in blocks if isinstance(b.get("toolUse"), Mapping)]
        if calls:
            out["tool_calls"] = calls
        return [out]
    results = [
        {
            "role": "tool",
            "tool_call_id": str(b["toolResult"].get("toolUseId")),
            "content": tool_result_content(b["toolResult"]),
            **({"status": "error"} if b["toolResult"].get("status") == "error" else {}),
        }
        for b in blocks
        if isinstance(b.get("toolResult"), Mapping)
    ]
    text = _join(_text(blocks), _other_kinds(blocks))
    return [*results, {"role": role, "content": text}] if text is not None or not results else results


def _join(text: str | None, others: list[str]) -> str | None:
    parts = ([text] if text else []) + others
    return " ".join(parts) if parts else text


def tool_call(use: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": str(use.get("toolUseId")),
        "name": str(use.get("name")),
        "arguments": json_value(use.get("input")),
    }


def messages(history: Sequence[Mapping[str, Any]], system: Any = None) -> list[dict[str, Any]]:
    """The request's transcript: the system prompt first (when there is one), then each message."""
    out: list[dict[str, Any]] = []
    if isinstance(system, str) and system:
        out.append({"role": "system", "content": system})
    elif isinstance(system, list) and system:
        text = _text(b for b in system if isinstance(b, Mapping))
        if text:
            out.append({"role": "system", "content": text})
    for msg in history:
        out.extend(message(msg))
    return out


def model_name(model: Any) -> str:
    """The model's id from its config (`OpenAIModel`, `BedrockModel`, ... keep it as `model_id`), or
    its class name."""
    config = getattr(model, "config", None)
    model_id = config.get("model_id") if isinstance(config, Mapping) else None
    return str(model_id) if model_id else type(model).__name__


def request(ctx: Any) -> tuple[dict[str, Any], str, int]:
    """An `InvokeModelContext` as the node input, and the step identity's first-message key and
    prompt length."""
    transcript = messages(ctx.messages, ctx.system_prompt)
    first = transcript[0] if transcript else {}
    key = f"{first.get('role')}:{first.get('content')}"
    node_input: dict[str, Any] = {"model": model_name(ctx.model), "messages": transcript}
    tools = [str(spec.get("name")) for spec in ctx.tool_specs or ()]
    if tools:
        node_input["tools"] = tools
    return node_input, key, len(transcript)


def reply(stop: Any, model: str) -> dict[str, Any]:
    """A `ModelStopReason` (its `stop`: stop reason, message, usage, metrics) as the adapters' reply
    shape: `content`, `tool_calls` (`[{"id", "name", "arguments"}]`), `finish_reason`, `model`."""
    stop_reason, msg, _usage, _metrics = stop["stop"]
    out = message(msg)[0]
    out["finish_reason"] = str(stop_reason)
    out["model"] = model
    return out


def usage(stop: Any) -> dict[str, Any] | None:
    u = stop["stop"][2]
    if not isinstance(u, Mapping):
        return None
    inp, outp = int(u.get("inputTokens") or 0), int(u.get("outputTokens") or 0)
    return {"inputTokens": inp, "outputTokens": outp, "totalTokens": int(u.get("totalTokens") or inp + outp)}


def tool_output(result: Mapping[str, Any]) -> Any:
    """A tool's `ToolResult` as its node output: the content (text, or the JSON it returned)."""
    return tool_result_content(result)
