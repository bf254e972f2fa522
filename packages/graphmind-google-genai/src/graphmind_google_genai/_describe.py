"""What a node shows: a Gemini request and reply as JSON, in the shape every model adapter uses
(docs/protocol.md): `{"model", "messages": [{"role", "content", "tool_calls"?}], ...}` in and
`{"role": "assistant", "content", "tool_calls", "finish_reason", "model"}` out, so the viewer, the
inject box and a replay read a Gemini step as they read an OpenAI one.

Every dict and list here is built for core; a value the SDK holds (a function call's `args`, a
function response) is copied first (`owned_copy`, else a JSON round trip).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from google.genai import _transformers, types

from graphmind.adapter import owned_copy

# The config fields a step shows (and an edit may change): the sampling settings a person tunes.
CONFIG_FIELDS = (
    "temperature",
    "top_p",
    "top_k",
    "max_output_tokens",
    "candidate_count",
    "seed",
    "stop_sequences",
    "response_mime_type",
)


def plain(value: Any) -> Any:
    """A fresh JSON copy of a value the SDK or the app holds."""
    copy, owned = owned_copy(value)
    if owned:
        return copy
    return json.loads(json.dumps(value, default=str))


def as_config(config: Any) -> types.GenerateContentConfig | None:
    """The request's config as the SDK's type (it takes a dict or the model)."""
    if config is None or isinstance(config, types.GenerateContentConfig):
        return config
    return types.GenerateContentConfig.model_validate(config)


def _text(parts: Iterable[types.Part]) -> str:
    return "".join(p.text for p in parts if p.text and not p.thought)


def tool_call(call: types.FunctionCall) -> dict[str, Any]:
    out: dict[str, Any] = {"name": call.name or ""}
    if call.id:
        out["id"] = call.id
    out["arguments"] = plain(call.args or {})
    return out


def _part(part: types.Part) -> dict[str, Any] | None:
    """A part other than text and function calls, as a short JSON summary (no bytes)."""
    if part.inline_data is not None:
        return {"type": "inline_data", "mime_type": part.inline_data.mime_type}
    if part.file_data is not None:
        return {"type": "file_data", "file_uri": part.file_data.file_uri}
    if part.executable_code is not None:
        return {"type": "executable_code", "code": part.executable_code.code}
    if part.code_execution_result is not None:
        return {"type": "code_execution_result", "output": part.code_execution_result.output}
    return None


def message(content: types.Content) -> list[dict[str, Any]]:
    """One Content as messages: a model turn is one assistant message (text and tool calls); a user
    turn is a user message, and each function response in it a tool message."""
    parts = content.parts or []
    if content.role == "model":
        out: dict[str, Any] = {"role": "assistant", "content": _text(parts) or None}
        calls = [tool_call(p.function_call) for p in parts if p.function_call is not None]
        if calls:
            out["tool_calls"] = calls
        return [out]
    messages: list[dict[str, Any]] = []
    for p in parts:
        if p.function_response is not None:
            response = p.function_response
            tool: dict[str, Any] = {
                "role": "tool",
                "name": response.name or "",
                "content": plain(response.response),
            }
            if response.id:
                tool["tool_call_id"] = response.id
            messages.append(tool)
    others = [d for d in map(_part, parts) if d is not None]
    text = _text(parts)
    if others:
        messages.append({"role": "user", "content": [{"type": "text", "text": text}, *others]})
    elif text or not messages:
        messages.append({"role": "user", "content": text})
    return messages


def _system(config: types.GenerateContentConfig | None) -> str | None:
    if config is None or config.system_instruction is None:
        return None
    contents = _transformers.t_contents(config.system_instruction)
    return "\n".join(_text(c.parts or []) for c in contents) or None


def tool_names(config: types.GenerateContentConfig | None) -> list[str]:
    names: list[str] = []
    for tool in (config.tools if config is not None else None) or []:
        if callable(tool):
            names.append(str(getattr(tool, "__name__", tool)))
        elif isinstance(tool, types.Tool):
            names += [d.name for d in tool.function_declarations or [] if d.name]
    return names


def request(model: str, contents: Any, config: Any) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length) of one `generate_content` request."""
    cfg = as_config(config)
    messages: list[dict[str, Any]] = []
    system = _system(cfg)
    if system:
        messages.append({"role": "system", "content": system})
    for content in _transformers.t_contents(contents):
        messages += message(content)
    node_input: dict[str, Any] = {"model": str(model), "messages": messages}
    settings = {
        k: plain(getattr(cfg, k)) for k in CONFIG_FIELDS if cfg is not None and getattr(cfg, k) is not None
    }
    if settings:
        node_input["config"] = settings
    names = tool_names(cfg)
    if names:
        node_input["tools"] = names
    first = messages[0] if messages else {}
    return node_input, json.dumps(first, sort_keys=True), len(messages)


def usage(meta: types.GenerateContentResponseUsageMetadata | None) -> dict[str, Any] | None:
    """Gemini's `usage_metadata` as the wire's `{inputTokens, outputTokens, totalTokens}`: the
    output counts the thinking tokens too (Gemini bills them as output), and the cached part of
    the prompt is `cacheReadTokens`."""
    if meta is None:
        return None
    inp = meta.prompt_token_count
    out = None
    if meta.candidates_token_count is not None or meta.thoughts_token_count is not None:
        out = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
    total = meta.total_token_count
    if total is None and inp is not None and out is not None:
        total = inp + out
    result: dict[str, Any] = {"inputTokens": inp, "outputTokens": out, "totalTokens": total}
    if meta.cached_content_token_count is not None:
        result["cacheReadTokens"] = meta.cached_content_token_count
    return result


def _finish(reason: Any) -> str | None:
    if reason is None:
        return None
    return str(getattr(reason, "value", reason))


def _reply_of(parts: list[types.Part], finish_reason: Any, model: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": "assistant",
        "content": _text(parts) or None,
        "tool_calls": [tool_call(p.function_call) for p in parts if p.function_call is not None],
    }
    finish = _finish(finish_reason)
    if finish:
        out["finish_reason"] = finish
    if model:
        out["model"] = str(model)
    return out


def _first_parts(response: types.GenerateContentResponse) -> tuple[list[types.Part], Any]:
    candidates = response.candidates or []
    if not candidates:
        return [], None
    content = candidates[0].content
    return list((content.parts if content is not None else None) or []), candidates[0].finish_reason


def reply(response: types.GenerateContentResponse) -> dict[str, Any]:
    """The node's output: the first candidate's text and function calls."""
    parts, finish = _first_parts(response)
    return _reply_of(parts, finish, response.model_version)


def reply_usage(response: types.GenerateContentResponse) -> dict[str, Any] | None:
    return usage(response.usage_metadata)


def chunk_text(chunk: types.GenerateContentResponse) -> str:
    """The text a streamed chunk adds (not `chunk.text`, which warns on a function-call chunk).
    Per chunk, so the usual one-part chunk is read without building lists."""
    candidates = chunk.candidates
    content = candidates[0].content if candidates else None
    parts = content.parts if content is not None else None
    if not parts:
        return ""
    if len(parts) == 1:
        part = parts[0]
        return part.text if part.text and not part.thought else ""
    return _text(parts)


def chunks(items: list[types.GenerateContentResponse]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A stream's (output, usage): its chunks' parts in order, the last finish reason and usage."""
    parts: list[types.Part] = []
    finish: Any = None
    model: str | None = None
    meta = None
    for chunk in items:
        chunk_parts, chunk_finish = _first_parts(chunk)
        parts += chunk_parts
        finish = chunk_finish or finish
        model = model or chunk.model_version
        meta = chunk.usage_metadata or meta
    return _reply_of(parts, finish, model), usage(meta)


def tool_input(args: Mapping[str, Any] | None) -> dict[str, Any]:
    """A tool node's input: the arguments the model sent, as JSON."""
    value = plain(dict(args or {}))
    return value if isinstance(value, dict) else {"arguments": value}
