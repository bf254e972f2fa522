"""What an `llm:step` node shows for a LiteLLM call: the request trimmed to what a person reads, the
reply (text, tool calls, finish reason), the usage and the cost LiteLLM computed.

Plain functions over LiteLLM's own types (`ModelResponse`, `ModelResponseStream`, `EmbeddingResponse`,
`ResponsesAPIResponse`, `TextCompletionResponse`) read by attribute, so a field a provider leaves out
is simply absent from the node. None of them raises on an odd shape: they fall back to less detail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from litellm import ModelResponse

from graphmind.adapter import Owned, json_scalar, json_scalars, plain_message


def request_of(
    positional: tuple[str, ...], args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """The call's arguments by name (positional ones named as the public function names them)."""
    if not args:
        return dict(kwargs)
    named = dict(zip(positional, args, strict=False))  # extra positionals: not described
    named.update(kwargs)
    return named


def _get(obj: Any, name: str) -> Any:
    if type(obj) is dict or isinstance(obj, Mapping):  # (the exact-type check skips the ABC check: hot path)
        return obj.get(name)
    return getattr(obj, name, None)


def _text(content: Any) -> Any:
    """A message's content: a string as is; a list of parts as their text (an image as a marker)."""
    if isinstance(content, str) or content is None:
        return content
    if isinstance(content, Sequence):
        parts = []
        for part in content:
            kind = _get(part, "type")
            if kind == "text":
                parts.append(_get(part, "text") or "")
            elif kind is not None:
                parts.append(f"[{kind}]")
        return "".join(parts)
    return str(content)


def tool_call(call: Any) -> dict[str, Any]:
    function = _get(call, "function")
    return {"id": _get(call, "id"), "name": _get(function, "name"), "arguments": _get(function, "arguments")}


def message(msg: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": _get(msg, "role"), "content": _text(_get(msg, "content"))}
    calls = _get(msg, "tool_calls")
    if calls:
        out["tool_calls"] = [tool_call(c) for c in calls]
    for key in ("tool_call_id", "name"):
        value = _get(msg, key)
        if value:
            out[key] = value
    return out


def _plain_dict(d: dict[Any, Any]) -> bool:
    """Every key a str and every value `json_scalar`: a shallow copy of `d` is its whole snapshot."""
    for k, v in d.items():
        if not (type(k) is str and (k.isascii() or json_scalar(k))):
            return False
        if not ((type(v) is str and v.isascii()) or json_scalar(v)):
            return False
    return True


def tool_names(tools: Any) -> list[str]:
    names: list[str] = []
    if isinstance(tools, Sequence) and not isinstance(tools, str):
        for tool in tools:
            name = _get(_get(tool, "function"), "name") or _get(tool, "name")
            if isinstance(name, str):
                names.append(name)
    return names


def _conversation(
    request: Mapping[str, Any], trimmed: list[Any], owned: bool = False
) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length): the step identity's inputs (graphmind.StepTracker).
    `Owned` when the caller built `trimmed` and every message in it (checked) and the rest is plain."""
    model = request.get("model")
    node_input: dict[str, Any] = {"model": model, "messages": trimmed}
    names = tool_names(request.get("tools"))
    if names:
        node_input["tools"] = names
    if request.get("stream"):
        node_input["stream"] = True
    first = trimmed[0] if trimmed else None
    key = f"{_get(first, 'role')}\x00{_get(first, 'content')}" if first is not None else ""
    described = (node_input, key, len(trimmed))
    if owned and json_scalar(model) and json_scalars(names):
        return Owned(described)
    return described


def chat_request(request: Mapping[str, Any]) -> tuple[dict[str, Any], str, int]:
    raw = request.get("messages") or []
    if not isinstance(raw, list | tuple):
        raw = ()
    # A plain dict message goes as it is (the event pipeline snapshots it); a typed one is read. A
    # dict of plain scalars (nearly every message) is copied here instead: the node owns the copy,
    # and the pipeline need not walk it.
    trimmed: list[Any] = []
    owned = True
    for m in raw:
        if type(m) is dict:
            if owned and _plain_dict(m):
                trimmed.append(dict(m))
            else:
                owned = False
                trimmed.append(m)
        else:
            out = message(m)
            trimmed.append(out)
            owned = owned and plain_message(out)
    return _conversation(request, trimmed, owned)


def text_request(request: Mapping[str, Any]) -> tuple[dict[str, Any], str, int]:
    return _conversation(request, [{"role": "user", "content": _text(request.get("prompt"))}])


def responses_request(request: Mapping[str, Any]) -> tuple[dict[str, Any], str, int]:
    raw = request.get("input")
    if isinstance(raw, str):
        trimmed: list[Any] = [{"role": "user", "content": raw}]
    elif isinstance(raw, Sequence):
        trimmed = [message(m) if _get(m, "role") else {"type": _get(m, "type")} for m in raw]
    else:
        trimmed = []
    return _conversation(request, trimmed)


def embedding_request(request: Mapping[str, Any]) -> tuple[dict[str, Any], str, int]:
    """Its input is the text(s) to embed, not a conversation."""
    return {"model": request.get("model"), "input": request.get("input")}, "", 1


def usage_of(usage: Any, cost: Any = None) -> dict[str, Any] | None:
    """LiteLLM's `Usage` (OpenAI names) as the wire's `{inputTokens, outputTokens, totalTokens}`, plus `costUsd`."""
    out: dict[str, Any] = {}
    if usage is not None:
        for wire, names in (
            ("inputTokens", ("prompt_tokens", "input_tokens")),
            ("outputTokens", ("completion_tokens", "output_tokens")),
            ("totalTokens", ("total_tokens",)),
        ):
            for name in names:
                value = _get(usage, name)
                if isinstance(value, int):
                    out[wire] = value
                    break
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        out["costUsd"] = cost
    return out or None


def _cost(result: Any) -> Any:
    hidden = getattr(result, "_hidden_params", None)
    return hidden.get("response_cost") if isinstance(hidden, Mapping) else None


def _chat_reply(result: ModelResponse) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The common case read by attribute (the generic path's lookups cost most of a node's time)."""
    choices = result.choices
    out: dict[str, Any] = {}
    if choices:
        choice = choices[0]
        msg = choice.message
        out = {"role": msg.role, "content": msg.content}
        if msg.tool_calls:
            out["tool_calls"] = [tool_call(c) for c in msg.tool_calls]
        out["finish_reason"] = choice.finish_reason
        if len(choices) > 1:
            out["choices"] = len(choices)
    if result.model:
        out["model"] = result.model
    usage: dict[str, Any] | None = None
    tokens = getattr(result, "usage", None)
    if tokens is not None:
        usage = {
            "inputTokens": tokens.prompt_tokens,
            "outputTokens": tokens.completion_tokens,
            "totalTokens": tokens.total_tokens,
        }
    cost = result._hidden_params.get("response_cost")
    if isinstance(cost, int | float):
        usage = usage or {}
        usage["costUsd"] = cost
    if plain_message(out) and (usage is None or json_scalars(usage.values())):
        return Owned((out, usage))  # every container built here, every leaf plain
    return out, usage


def _with_model(out: dict[str, Any], result: Any) -> dict[str, Any]:
    model = _get(result, "model")
    if model:
        out["model"] = model
    return out


def chat_result(result: Any) -> tuple[Any, dict[str, Any] | None]:
    if type(result) is ModelResponse:
        return _chat_reply(result)
    choices = _get(result, "choices") or []
    out: dict[str, Any] = {}
    if choices:
        out = message(_get(choices[0], "message") or {})
        out["finish_reason"] = _get(choices[0], "finish_reason")
    if len(choices) > 1:
        out["choices"] = len(choices)
    return _with_model(out, result), usage_of(_get(result, "usage"), _cost(result))


def text_result(result: Any) -> tuple[Any, dict[str, Any] | None]:
    choices = _get(result, "choices") or []
    out = {"text": _get(choices[0], "text") if choices else None}
    return _with_model(out, result), usage_of(_get(result, "usage"), _cost(result))


def responses_result(result: Any) -> tuple[Any, dict[str, Any] | None]:
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in _get(result, "output") or []:
        if _get(item, "type") == "message":
            text.extend(
                _get(p, "text") or "" for p in _get(item, "content") or [] if _get(p, "type") == "output_text"
            )
        elif _get(item, "type") == "function_call":
            calls.append(
                {
                    "id": _get(item, "call_id"),
                    "name": _get(item, "name"),
                    "arguments": _get(item, "arguments"),
                }
            )
    out: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        out["tool_calls"] = calls
    out["status"] = _get(result, "status")
    return _with_model(out, result), usage_of(_get(result, "usage"), _cost(result))


def embedding_result(result: Any) -> tuple[Any, dict[str, Any] | None]:
    data = _get(result, "data") or []
    first = _get(data[0], "embedding") if data else None
    out = {"vectors": len(data), "dimensions": len(first) if isinstance(first, Sequence) else None}
    return _with_model(out, result), usage_of(_get(result, "usage"), _cost(result))


def provider_of(result: Any) -> Any:
    hidden = getattr(result, "_hidden_params", None)
    return hidden.get("custom_llm_provider") if isinstance(hidden, Mapping) else None
