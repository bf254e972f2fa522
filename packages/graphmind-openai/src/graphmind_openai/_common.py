"""What both OpenAI APIs share: trimming text, tool names, usage, and the state a stream reader
keeps. The per-API parts are `_chat.py` and `_responses.py`, tied together by the table in
`_apis.py`; the SSE rendering helpers (`sse`, `split`) are the Stainless layer's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graphmind.adapter import json_scalar, json_scalars, plain_message
from graphmind.adapter.stainless import Owned, split, sse

__all__ = [
    "StreamState",
    "first_key",
    "request_input",
    "split",
    "sse",
    "text_of",
    "tool_names",
    "usage_of",
]

# The first message's text for the prompt-prefix rule; built once (json.dumps with options makes a
# new encoder on every call).
_KEY_TEXT = json.JSONEncoder(sort_keys=True, default=str).encode
# The C string encoder `_KEY_TEXT` writes each string with (ensure_ascii: json.encoder.iterencode).
_KEY_STR = json.encoder.encode_basestring_ascii


def first_key(first: Any) -> str:
    """The prompt-prefix rule's key of a first message: its sorted JSON (`_KEY_TEXT`). A plain
    `{"role": str, "content": str}` message, nearly every first message, is spelled out directly:
    the same text, without an encoder's setup per call (tests/test_describe.py holds them equal)."""
    if type(first) is dict and len(first) == 2:
        role = first.get("role")
        content = first.get("content")
        if type(role) is str and type(content) is str:
            return '{"content": ' + _KEY_STR(content) + ', "role": ' + _KEY_STR(role) + "}"
    try:
        return _KEY_TEXT(first)
    except Exception:
        return repr(first)


def text_of(content: Any) -> Any:
    """A message's content as text where it is text; images and files as a short marker."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if not isinstance(part, Mapping):
                parts.append(str(part))
                continue
            kind = part.get("type")
            if "text" in part and isinstance(part["text"], str):
                parts.append(part["text"])
            elif kind:
                parts.append(f"[{kind}]")
        return "\n".join(parts)
    return content


def tool_names(tools: Any) -> list[str]:
    """Names from a `tools` parameter (Chat: `{"type": "function", "function": {...}}`; Responses: flat)."""
    names: list[str] = []
    if not isinstance(tools, list | tuple):
        return names
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        fn = tool.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else tool.get("name")
        if isinstance(name, str):
            names.append(name)
        elif isinstance(tool.get("type"), str):
            names.append(tool["type"])  # built-in tools: web_search, file_search, ...
    return names


def owned_reply(out: Any, usage: dict[str, Any] | None) -> tuple[Any, dict[str, Any] | None]:
    """(output, usage) of a reply, `Owned` when `out` is a message dict built here (core's `plain_message`)
    and `usage` a dict built here (`usage_of`, or read off the SDK's usage) of plain leaves."""
    if plain_message(out) and (usage is None or json_scalars(usage.values())):
        return Owned((out, usage))
    return out, usage


def usage_of(usage: Any) -> dict[str, Any] | None:
    """OpenAI usage (either API's names) as the wire's `{inputTokens, outputTokens, totalTokens}`."""
    if not isinstance(usage, Mapping):
        return None
    inp = usage.get("prompt_tokens", usage.get("input_tokens"))
    out = usage.get("completion_tokens", usage.get("output_tokens"))
    total = usage.get("total_tokens")
    if total is None and isinstance(inp, int) and isinstance(out, int):
        total = inp + out
    return {"inputTokens": inp, "outputTokens": out, "totalTokens": total}


def request_input(
    body: Mapping[str, Any], trimmed: list[Any], first: Any, instructions: Any = None, owned: bool = False
) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length) from a request's trimmed messages; `Owned`
    when the caller says it owns `trimmed` (a fresh list of messages it built, checked) and the
    model, instructions and tool names are plain too."""
    key = first_key(first)
    model = body.get("model")
    node_input: dict[str, Any] = {"model": model, "messages": trimmed}
    if instructions:
        node_input["instructions"] = instructions
    names = tool_names(body.get("tools"))
    if names:
        node_input["tools"] = names
    described = (node_input, key, len(trimmed))
    if owned and json_scalar(model) and json_scalar(instructions) and json_scalars(names):
        return Owned(described)
    return described


@dataclass
class StreamState:
    """What a stream has said so far, for either API (each uses its own fields). Each API's reader
    (`_apis.py`) is this with the API's functions as its methods."""

    ex: Any  # graphmind.adapter.NodeExecution: the node the stream's tokens go to
    # graphmind.adapter.Engine: a provider-executed tool seen in the stream is recorded through it
    engine: Any
    complete: bool = False  # the provider said the reply is whole ([DONE] / response.completed)
    head: dict[str, Any] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish: Any = None
    usage: Any = None
    final: Any = None
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: Any = None
    model: Any = None
    out_calls: list[dict[str, Any]] = field(default_factory=list)
