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

from graphmind.adapter import json_scalar, json_scalars, plain_message
from graphmind.adapter.stainless import Owned

# The first message's text for the prompt-prefix rule; built once (json.dumps with options makes a
# new encoder on every call).
_KEY_TEXT = json.JSONEncoder(sort_keys=True, default=str).encode
# The C string encoder `_KEY_TEXT` writes each string with (ensure_ascii: json.encoder.iterencode).
_KEY_STR = json.encoder.encode_basestring_ascii


def first_key(system: Any, first: Any) -> str:
    """The prompt-prefix rule's key: the sorted JSON (`_KEY_TEXT`) of the system prompt and the first
    message. A str (or no) system prompt and a plain `{"role": str, "content": str}` message, nearly
    every request, are spelled out directly: the same text, without an encoder's setup per call."""
    if type(first) is dict and len(first) == 2 and (system is None or type(system) is str):
        role = first.get("role")
        content = first.get("content")
        if type(role) is str and type(content) is str:
            head = '{"first": {"content": ' + _KEY_STR(content) + ', "role": ' + _KEY_STR(role)
            return head + '}, "system": ' + ("null" if system is None else _KEY_STR(system)) + "}"
    data = {"system": system, "first": first}
    try:
        return _KEY_TEXT(data)
    except Exception:
        return repr(data)


# Every key `_text_of` writes in a part dict. A part whose keys are all among these has no key JSON
# would write apart from the snapshot (an int 1 next to a "1", a tuple): one C-level check.
_PART_KEYS = frozenset({"type", "id", "name", "input", "tool_use_id", "content", "is_error", "thinking"})


def _plain_parts(value: Any) -> bool:
    """`_text_of`'s answer is ours and plain: a `json_scalar`, or the list of parts it built (a list
    content is always rebuilt as one), each a scalar or a record dict of scalars (a `tool_use`'s
    `input` is the app's dict: not a scalar, so not owned; a text block's dict text is copied, and
    its keys must be ones `_text_of` writes)."""
    if type(value) is not list:
        return json_scalar(value)
    return all(
        json_scalar(part)
        or (type(part) is dict and _PART_KEYS.issuperset(part) and json_scalars(part.values()))
        for part in value
    )


def _plain_message(message: Any) -> bool:
    """A message `_message` built (an exact dict: an app's message is always copied) of plain parts."""
    if type(message) is not dict:
        return False
    role = message.get("role")
    content = message.get("content")
    if type(content) is str and content.isascii() and type(role) is str and role.isascii():
        return True  # nearly every message: no call
    return json_scalar(role) and _plain_parts(content)


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
            text = block.get("text")
            # A text that is a dict is the app's: copied, so that a dict part is always one built
            # here (`_plain_parts` may then claim it; its keys and values are checked there).
            parts.append(dict(text) if type(text) is dict else text)
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
    if type(message) is not dict and not isinstance(message, Mapping):  # (exact type first: no ABC check)
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
    key = first_key(system, trimmed[0] if trimmed else None)
    model = body.get("model")
    node_input: dict[str, Any] = {"model": model, "messages": trimmed}
    if system:
        node_input["system"] = system
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int):
        node_input["max_tokens"] = max_tokens
    names = tool_names(body.get("tools"))
    if names:
        node_input["tools"] = names
    described = (node_input, key, len(trimmed))
    if (
        json_scalar(model)
        and _plain_parts(system)
        and json_scalars(names)
        and all(_plain_message(m) for m in trimmed)
    ):
        return Owned(described)  # every container built here, every leaf plain
    return described


def usage_of(usage: Any) -> dict[str, Any] | None:
    """Anthropic usage as the wire's `{inputTokens, outputTokens, totalTokens}` plus the cache counts.

    Anthropic's `input_tokens` leaves out the prompt tokens read from or written to the cache;
    `inputTokens` here counts the whole prompt (as OpenAI's `prompt_tokens` does), and
    `cacheReadTokens` / `cacheCreationTokens` say how much of it the cache served or stored.
    """
    if usage is None:
        return None
    # (exact dict first: a Mapping ABC check is slow)
    get: Callable[[str], Any] = (
        usage.get if type(usage) is dict or isinstance(usage, Mapping) else lambda k: getattr(usage, k, None)
    )
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


def usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    """The wire's usage (`usage_of`'s shape) back as Anthropic's `usage` field: a replayed reply
    reports the tokens the recorded one did (`input_tokens` without the cache's share, as the API does)."""
    read = usage.get("cacheReadTokens")
    created = usage.get("cacheCreationTokens")
    prompt = usage.get("inputTokens")
    body: dict[str, Any] = {
        "input_tokens": max(0, int(prompt or 0) - int(read or 0) - int(created or 0)),
        "output_tokens": int(usage.get("outputTokens") or 0),
    }
    if read is not None:
        body["cache_read_input_tokens"] = int(read)
    if created is not None:
        body["cache_creation_input_tokens"] = int(created)
    return body


def _owned_reply(out: dict[str, Any], usage: dict[str, Any] | None) -> tuple[Any, dict[str, Any] | None]:
    """(output, usage), `Owned` when `out` (built by `_reply`: its only list is the `tool_calls` it
    built) passes core's `plain_message` and `usage` (built by `usage_of`) is flat and plain."""
    if plain_message(out) and (usage is None or json_scalars(usage.values())):
        return Owned((out, usage))
    return out, usage


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
    return _owned_reply(
        _reply(blocks, data.get("stop_reason"), data.get("model")), usage_of(data.get("usage"))
    )


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
    return _owned_reply(_reply(blocks, obj.stop_reason, obj.model), usage_of(obj.usage))
