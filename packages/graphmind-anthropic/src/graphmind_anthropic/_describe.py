"""What an `llm:step` node shows for a Messages call: the request trimmed to what a person reads,
the reply, the usage (with prompt-cache reads and writes).

Everything here works on plain JSON (the request body the SDK is about to send, the `Message` body
it received, or what `_stream.MessageReader` assembled from the stream's events), so one set of
functions serves every call shape: typed, raw, streamed, GA and beta alike. `describe_message` reads
the SDK's own `Message` / `BetaMessage` without dumping it (the cheaper path for `create`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

# The first message's text for the prompt-prefix rule; built once (json.dumps with options makes a
# new encoder on every call).
_KEY_TEXT = json.JSONEncoder(sort_keys=True, default=str).encode


def _text_of(content: Any) -> Any:
    """A message's content as text where it is text; tool_use / tool_result / images as short records."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list | tuple):
        return content
    parts: list[Any] = []
    for block in content:
        if not isinstance(block, Mapping):
            block = _as_dict(block)
            if block is None:
                parts.append(str(block))
                continue
        kind = block.get("type")
        if kind == "text":
            parts.append(block.get("text"))
        elif kind == "tool_use":
            parts.append(
                {
                    "type": "tool_use",
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "input": block.get("input"),
                }
            )
        elif kind == "tool_result":
            parts.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block.get("tool_use_id"),
                    "content": _text_of(block.get("content")),
                    "is_error": block.get("is_error"),
                }
            )
        elif kind == "thinking":
            parts.append({"type": "thinking", "thinking": block.get("thinking")})
        else:
            parts.append(f"[{kind}]")
    if all(isinstance(p, str) for p in parts):
        return "\n".join(parts)
    return parts


def _as_dict(block: Any) -> dict[str, Any] | None:
    """An SDK content block model (the app may append `message.content` as is) as a dict."""
    dump = getattr(block, "model_dump", None)
    if dump is None:
        return None
    try:
        data = dump(mode="json", exclude_unset=True)
    except Exception:
        return None
    return data if isinstance(data, dict) else None


def _message(message: Any) -> Any:
    if not isinstance(message, Mapping):
        return message
    return {"role": message.get("role"), "content": _text_of(message.get("content"))}


def tool_names(tools: Any) -> list[str]:
    """Names from a `tools` parameter: custom tools (`{"name", "input_schema"}`) and server tools (`{"type", "name"}`)."""
    names: list[str] = []
    if not isinstance(tools, list | tuple):
        return names
    for tool in tools:
        name = tool.get("name") if isinstance(tool, Mapping) else getattr(tool, "name", None)
        if isinstance(name, str):
            names.append(name)
    return names


def describe_request(body: Mapping[str, Any]) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length) for one Messages request body."""
    messages = body.get("messages")
    # An iterable the SDK has not read yet (a generator) is left alone: reading it here would empty it.
    trimmed = [_message(m) for m in messages] if isinstance(messages, list | tuple) else []
    system = body.get("system")
    system = _text_of(system) if isinstance(system, str | list | tuple) else None
    first = {"system": system, "first": trimmed[0] if trimmed else None}
    try:
        key = _KEY_TEXT(first)
    except Exception:
        key = repr(first)
    node_input: dict[str, Any] = {"model": body.get("model"), "messages": trimmed}
    if system:
        node_input["system"] = system
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int):
        node_input["max_tokens"] = max_tokens
    names = tool_names(body.get("tools"))
    if names:
        node_input["tools"] = names
    return node_input, key, len(trimmed)


def usage_of(usage: Any) -> dict[str, Any] | None:
    """Anthropic usage as the wire's `{inputTokens, outputTokens, totalTokens}` plus the cache counts.

    Anthropic's `input_tokens` leaves out the prompt tokens read from or written to the cache;
    `inputTokens` here counts the whole prompt (as OpenAI's `prompt_tokens` does), and
    `cacheReadTokens` / `cacheCreationTokens` say how much of it the cache served or stored.
    """
    if usage is None:
        return None
    get: Callable[[str], Any] = usage.get if isinstance(usage, Mapping) else lambda k: getattr(usage, k, None)
    inp = get("input_tokens")
    out = get("output_tokens")
    read = get("cache_read_input_tokens")
    created = get("cache_creation_input_tokens")
    prompt = None if inp is None else inp + (read or 0) + (created or 0)
    total = None if prompt is None or out is None else prompt + out
    result: dict[str, Any] = {"inputTokens": prompt, "outputTokens": out, "totalTokens": total}
    if read is not None:
        result["cacheReadTokens"] = read
    if created is not None:
        result["cacheCreationTokens"] = created
    return result


def _reply(blocks: list[Mapping[str, Any]], stop_reason: Any, model: Any) -> dict[str, Any]:
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    thinking: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            text.append(block.get("text") or "")
        elif kind in ("tool_use", "server_tool_use"):
            calls.append({"id": block.get("id"), "name": block.get("name"), "arguments": block.get("input")})
        elif kind == "thinking":
            thinking.append(block.get("thinking") or "")
    out: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        out["tool_calls"] = calls
    if thinking:
        out["thinking"] = "".join(thinking)
    out["stop_reason"] = stop_reason
    if model:
        out["model"] = model
    return out


def describe_reply(data: Any) -> tuple[Any, dict[str, Any] | None]:
    """(node output, usage) from a Message body (a dict), or (data, None) for anything else."""
    if not isinstance(data, Mapping):
        return data, None
    blocks = [b for b in data.get("content") or [] if isinstance(b, Mapping)]
    return _reply(blocks, data.get("stop_reason"), data.get("model")), usage_of(data.get("usage"))


def describe_message(obj: Any) -> tuple[Any, dict[str, Any] | None] | None:
    """(output, usage) read off the SDK's own `Message` / `BetaMessage` / `ParsedMessage`; None for anything else."""
    content = getattr(obj, "content", None)
    if not isinstance(content, list) or getattr(obj, "type", None) != "message":
        return None
    blocks: list[Mapping[str, Any]] = []
    for block in content:
        kind = block.type
        if kind == "text":
            blocks.append({"type": kind, "text": block.text})
        elif kind in ("tool_use", "server_tool_use"):
            blocks.append({"type": kind, "id": block.id, "name": block.name, "input": block.input})
        elif kind == "thinking":
            blocks.append({"type": kind, "thinking": block.thinking})
    return _reply(blocks, obj.stop_reason, obj.model), usage_of(obj.usage)
