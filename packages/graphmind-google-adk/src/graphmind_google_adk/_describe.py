"""ADK's types as node JSON, and an injected JSON value as ADK's own types (one conversion each way).

| ADK                                   | node JSON                                                         |
|---------------------------------------|-------------------------------------------------------------------|
| `LlmRequest` (contents, config.tools) | `{"model", "agent", "messages": [transcript], "tools": [names]}`    |
| `LlmResponse`                         | `{"role": "assistant", "content", "tool_calls": [{"id", "name", "arguments"}]}` |
| `usage_metadata`                      | `{"inputTokens", "outputTokens", "totalTokens"}`                  |
| a tool's args / result dict           | the same dict, copied to plain JSON                               |

The transcript is the shape every adapter records (docs/protocol.md, "Injecting a model reply"):
ADK's `model` role is `assistant`, a `function_call` part is a `tool_calls` entry, a
`function_response` part is a `tool` message with its `tool_call_id`.

Owned payloads (docs/adapters.md): every dict and list of a node's input and output is built here,
so a describer answers `Owned(...)` when every leaf is also a `json_scalar` (checked while building:
core's `owned_copy` says so of the copy it makes); the plugin then tells the engine, and the
pipeline skips its snapshot walk. Anything else (a NaN, bytes, an app object, a lone surrogate) is not
claimed and takes the full pass, as before.
"""

from __future__ import annotations

import json
import math
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from graphmind.adapter import Owned, json_scalar, json_scalars, owned_copy, parse_model_reply


def plain_owned(value: Any) -> tuple[Any, bool]:
    """(`plain(value)`, whether the copy is owned: built here, every leaf a `json_scalar`). Plain
    JSON values (the common tool args and results) are copied directly (`owned_copy`); anything else
    takes the JSON round trip, which is not claimed."""
    copy, owned = owned_copy(value)
    return (copy, True) if owned else (_round_trip(value), False)


def plain(value: Any) -> Any:
    """A fresh plain-JSON copy of a framework value (tool args and results are dicts the app and ADK
    keep): a NaN, a bytes value or an object becomes its string, never an app object."""
    return plain_owned(value)[0]


def _round_trip(value: Any) -> Any:
    return json.loads(json.dumps(value, default=_fallback, allow_nan=True), parse_constant=str)


def _fallback(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return str(value)


def _text(parts: list[types.Part]) -> str | None:
    texts = [p.text for p in parts if p.text is not None and not p.thought]
    return "".join(texts) if texts else None


def _calls(parts: list[types.Part]) -> tuple[list[dict[str, Any]], bool]:
    """The function calls of `parts` in the reply shape, and whether they are owned."""
    calls: list[dict[str, Any]] = []
    owned = True
    for p in parts:
        call = p.function_call
        if call is not None:
            args = call.args or {}
            arguments, plain_args = owned_copy(args)  # (not `plain_owned`: one call less per value)
            if not plain_args:
                arguments = _round_trip(args)
            owned = owned and plain_args and json_scalars((call.id, call.name))
            calls.append({"id": call.id, "name": call.name, "arguments": arguments})
    return calls, owned


def _messages(content: types.Content, out: list[dict[str, Any]]) -> bool:
    """Appends the transcript messages of one ADK `Content` to `out`; True when they are owned."""
    parts = content.parts or []
    owned = True
    had_response = False
    for p in parts:
        response = p.function_response
        if response is not None:
            had_response = True
            result, plain_result = owned_copy(response.response)
            if not plain_result:
                result = _round_trip(response.response)
            owned = owned and plain_result and json_scalars((response.id, response.name))
            out.append(
                {"role": "tool", "tool_call_id": response.id, "name": response.name, "content": result}
            )
    role = "assistant" if content.role == "model" else (content.role or "user")
    text = _text(parts)
    calls, plain_calls = _calls(parts)
    if text is not None or calls or not had_response:
        message: dict[str, Any] = {"role": role, "content": text}
        owned = owned and json_scalars((role, text))
        if calls:
            message["tool_calls"] = calls
            owned = owned and plain_calls
        out.append(message)
    return owned


def transcript(contents: list[types.Content]) -> list[dict[str, Any]]:
    """Contents (a session's events, a request's) as transcript messages."""
    out: list[dict[str, Any]] = []
    for content in contents:
        _messages(content, out)
    return out


def _system(config: types.GenerateContentConfig | None) -> str | None:
    instruction = config.system_instruction if config is not None else None
    if instruction is None:
        return None
    if type(instruction) is str or isinstance(instruction, str):  # (exact first: no call)
        return instruction
    if isinstance(instruction, types.Content):
        return _text(list(instruction.parts or []))
    return str(instruction)


def tool_names(request: LlmRequest) -> list[str]:
    names = [str(name) for name in request.tools_dict]
    if names:
        return names
    config = request.config
    for tool in (config.tools or []) if config is not None else []:
        for declaration in getattr(tool, "function_declarations", None) or []:
            if declaration.name:
                names.append(declaration.name)
    return names


def request_input(request: LlmRequest, agent: str) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length): the step identity's inputs; an `Owned`
    tuple when the input is owned."""
    messages: list[dict[str, Any]] = []
    system = _system(request.config)
    owned = True
    if system is not None:
        messages.append({"role": "system", "content": system})
        owned = json_scalar(system)
    for content in request.contents:
        owned = _messages(content, messages) and owned
    node_input: dict[str, Any] = {"model": request.model, "agent": agent, "messages": messages}
    names = tool_names(request)
    if names:
        node_input["tools"] = names
        owned = owned and json_scalars(names)
    first = messages[0] if messages else None
    key = f"{first['role']}\x00{first['content']}" if first is not None else ""
    described = (node_input, key, len(messages))
    return Owned(described) if owned and json_scalars((request.model, agent)) else described


def response_output(response: LlmResponse) -> dict[str, Any]:
    return response_described(response)[0]


def response_described(response: LlmResponse) -> tuple[dict[str, Any], bool]:
    """(the reply in the one model-reply shape, whether it is owned)."""
    content = response.content
    parts = (content.parts or []) if content is not None else []
    text = _text(parts)
    out: dict[str, Any] = {"role": "assistant", "content": text}
    calls, owned = _calls(parts)
    if calls:
        out["tool_calls"] = calls
    if response.finish_reason is not None:
        out["finish_reason"] = str(response.finish_reason.value).lower()
    if response.error_code is not None:
        out["error"] = {"code": response.error_code, "message": response.error_message}
        owned = owned and json_scalars((response.error_code, response.error_message))
    if response.model_version:
        out["model"] = response.model_version
        owned = owned and json_scalar(response.model_version)
    return out, owned and json_scalars((text, out.get("finish_reason")))


def response_usage(response: LlmResponse) -> dict[str, Any] | None:
    usage = response.usage_metadata
    if usage is None:
        return None
    out: dict[str, Any] = {}
    for wire, value in (
        ("inputTokens", usage.prompt_token_count),
        ("outputTokens", usage.candidates_token_count),
        ("totalTokens", usage.total_token_count),
    ):
        if type(value) is int or isinstance(value, int):  # (exact first: no call)
            out[wire] = value
    return out or None


def plain_usage(usage: dict[str, Any] | None) -> bool:
    """Whether a `response_usage` answer is owned (exact ints: `isinstance` also lets a bool or an
    int subclass through)."""
    if usage is not None:
        for v in usage.values():  # a loop, not all(<genexpr>): no generator resumed per value
            if type(v) is not int:
                return False
    return True


def partial_text(response: LlmResponse) -> str:
    """The text delta of a streamed (partial) response."""
    content = response.content
    return (_text(content.parts or []) or "") if content is not None else ""


# What `response_output` adds to the one model-reply shape; a recorded output (a replay, a fork) is
# read back with them (the reply's own fields), an injected one may leave them out.
_OUTPUT_EXTRAS = ("finish_reason", "model", "error")


def to_response(value: Any) -> LlmResponse:
    """An injected (or replayed) model reply (`"text"` or `{"content", "tool_calls"}`,
    docs/protocol.md; a recorded `response_output` too) as ADK's `LlmResponse`: text and function
    calls, each call with its id (an injected call steers the agent to that tool). Raises ValueError
    on another shape (the gate is held again)."""
    finish = None
    if isinstance(value, dict) and any(k in value for k in _OUTPUT_EXTRAS):
        finish = value.get("finish_reason")
        value = {k: v for k, v in value.items() if k not in _OUTPUT_EXTRAS}
    reply = parse_model_reply(value)
    parts: list[types.Part] = []
    if reply.content:
        parts.append(types.Part(text=reply.content))
    for call in reply.tool_calls:
        parts.append(
            types.Part(function_call=types.FunctionCall(id=call.id, name=call.name, args=call.arguments))
        )
    if not parts:
        parts.append(types.Part(text=""))
    response = LlmResponse(content=types.Content(role="model", parts=parts), turn_complete=True)
    if isinstance(finish, str) and finish.upper() in types.FinishReason.__members__:
        response.finish_reason = types.FinishReason[finish.upper()]
    return response


def to_tool_result(value: Any) -> dict[str, Any]:
    """An injected tool result as the dict a before/after/error tool callback returns. A value that is
    not an object is wrapped as `{"result": value}`, as ADK's FunctionTool wraps a non-dict return
    (google/adk/flows/llm_flows/tools/_caller.py:291-293)."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("a tool result must be JSON")
    return {"result": value}
