"""What both OpenAI APIs share: trimming text, tool names, usage, and the state a stream reader
keeps. The per-API parts are `_chat.py` and `_responses.py`, tied together by the table in
`_apis.py`; the SSE rendering helpers (`sse`, `split`) are the Stainless layer's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graphmind.adapter.stainless import split, sse

__all__ = ["StreamState", "request_input", "split", "sse", "text_of", "tool_names", "usage_of"]

# The first message's text for the prompt-prefix rule; built once (json.dumps with options makes a
# new encoder on every call).
_KEY_TEXT = json.JSONEncoder(sort_keys=True, default=str).encode


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
    body: Mapping[str, Any], trimmed: list[Any], first: Any, instructions: Any = None
) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length) from a request's trimmed messages."""
    try:
        key = _KEY_TEXT(first)
    except Exception:
        key = repr(first)
    node_input: dict[str, Any] = {"model": body.get("model"), "messages": trimmed}
    if instructions:
        node_input["instructions"] = instructions
    names = tool_names(body.get("tools"))
    if names:
        node_input["tools"] = names
    return node_input, key, len(trimmed)


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
