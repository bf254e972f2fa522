"""What an `llm:step` and a `tool:<name>` node show for Pydantic AI: the request as core's transcript
(`{"role", "content", "tool_calls"?, "tool_call_id"?}` messages, the tools offered), the reply (text
and tool calls with the model's ids), the usage.

Plain functions over Pydantic AI's own message types (pydantic_ai/messages.py), read by `part_kind`,
so a part kind this module does not know is shown by its kind alone. Every dict and list is built
here, fresh; a value the framework keeps (a tool call's `args` dict) is copied as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_core import to_jsonable_python


def _json(value: Any) -> Any:
    """A fresh plain-JSON copy (a tool call's args dict is the framework's own: never handed over)."""
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return str(value)


def tool_result(value: Any) -> Any:
    """A tool's return value as fresh JSON (a pydantic model or dataclass by its fields, as Pydantic
    AI serialises it for the model; anything else unknown as its text)."""
    if value is None or type(value) in (str, int, bool):
        return value
    try:
        return to_jsonable_python(value, fallback=str)
    except Exception:
        return str(value)


def _content(content: Any) -> Any:
    """A user prompt's content: a string as is; a list of parts as their text (an image as a marker)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        out: list[str] = []
        for part in content:
            out.append(part if isinstance(part, str) else f"[{getattr(part, 'kind', type(part).__name__)}]")
        return "".join(out)
    return str(content)


def tool_call(part: ToolCallPart) -> dict[str, Any]:
    return {"id": part.tool_call_id, "name": part.tool_name, "arguments": _json(part.args_as_dict())}


def reply(response: ModelResponse) -> dict[str, Any]:
    """A `ModelResponse` as the adapters' reply shape: `content` (its text parts joined, or None),
    `tool_calls` (`[{"id", "name", "arguments"}]`, the model's own ids), `finish_reason`, `model`."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ToolCallPart):
            calls.append(tool_call(part))
    out: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        out["tool_calls"] = calls
    if response.finish_reason is not None:
        out["finish_reason"] = str(response.finish_reason)
    if response.model_name:
        out["model"] = str(response.model_name)
    return out


def usage(response: ModelResponse) -> dict[str, Any] | None:
    u = response.usage
    if u is None:
        return None
    inp, outp = int(u.input_tokens or 0), int(u.output_tokens or 0)
    return {"inputTokens": inp, "outputTokens": outp, "totalTokens": inp + outp}


def _request_messages(parts: Iterable[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        kind = getattr(part, "part_kind", None)
        if kind == "system-prompt":
            out.append({"role": "system", "content": part.content})
        elif kind == "user-prompt":
            out.append({"role": "user", "content": _content(part.content)})
        elif kind == "tool-return":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": part.tool_call_id,
                    "name": part.tool_name,
                    "content": part.model_response_str(),
                }
            )
        elif kind == "retry-prompt":
            msg: dict[str, Any] = {
                "role": "tool" if part.tool_name else "user",
                "content": part.model_response(),
            }
            if part.tool_name:
                msg["tool_call_id"] = part.tool_call_id
                msg["name"] = part.tool_name
            out.append(msg)
        elif kind is not None:
            out.append({"role": "user", "content": f"[{kind}]"})
    return out


def messages(history: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """The run's message history as core's transcript: requests' parts become system, user and tool
    messages, each response one assistant message."""
    out: list[dict[str, Any]] = []
    for message in history:
        if isinstance(message, ModelResponse):
            msg = reply(message)
            msg.pop("finish_reason", None)
            msg.pop("model", None)
            out.append(msg)
        else:
            instructions = getattr(message, "instructions", None)
            if isinstance(instructions, str) and instructions and not out:
                out.append({"role": "system", "content": instructions})
            out.extend(_request_messages(message.parts))
    return out


def tools(params: ModelRequestParameters) -> list[str]:
    """The names of the tools offered (function tools, then output tools)."""
    return [t.name for t in (*params.function_tools, *params.output_tools)]


def request(
    model_name: str, history: Sequence[ModelMessage], params: ModelRequestParameters
) -> tuple[dict[str, Any], str, int]:
    """The node input, and the step identity's first-message key and prompt length."""
    transcript = messages(history)
    first = transcript[0] if transcript else {}
    key = f"{first.get('role')}:{first.get('content')}"
    node_input: dict[str, Any] = {"model": model_name, "messages": transcript}
    offered = tools(params)
    if offered:
        node_input["tools"] = offered
    return node_input, key, len(transcript)
