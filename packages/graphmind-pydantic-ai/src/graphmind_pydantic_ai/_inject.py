"""JSON a person sent at a gate, as Pydantic AI's own types: the ONE conversion that inject (and
edit and replay, which hand core the same JSON) uses.

- a model reply (`parse_model_reply`'s one shape: text and/or tool calls) -> `ModelResponse` of
  `TextPart` / `ToolCallPart` (pydantic_ai/messages.py), so an injected tool call is what the agent
  calls next, with the injected arguments and id;
- a tool result -> the value the tool function would have returned, validated against the tool's
  declared return type when it has one (a `TypeAdapter` of the function's return annotation), so
  a typo is refused at the gate (it holds again) instead of reaching the model.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from graphmind.adapter import parse_model_reply


def model_response(value: Any, model_name: str | None) -> ModelResponse:
    """An injected reply as the `ModelResponse` the model would have returned (raises ValueError,
    naming the accepted shape, on anything else: the gate holds again)."""
    parsed = parse_model_reply(value)
    parts: list[ModelResponsePart] = []
    if parsed.content:
        parts.append(TextPart(content=parsed.content))
    for call in parsed.tool_calls:
        parts.append(ToolCallPart(tool_name=call.name, args=dict(call.arguments), tool_call_id=call.id))
    return ModelResponse(parts=parts, model_name=model_name)


def messages(value: Any, model_name: str | None) -> list[ModelMessage]:
    """An edited `llm:step` input (`{"messages": [...]}`, the transcript `_describe.messages` shows)
    as the request's `ModelMessage`s: system and user messages and tool results become the parts of
    `ModelRequest`s, each assistant message a `ModelResponse` (through `model_response`, the inject
    conversion, so its tool calls keep their ids). Raises ValueError naming what is wrong."""
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list) or not value["messages"]:
        raise ValueError('an edited model request is an object with a non-empty "messages" list')
    out: list[ModelMessage] = []
    parts: list[ModelRequestPart] = []
    for i, msg in enumerate(value["messages"]):
        if not isinstance(msg, dict):
            raise ValueError(f"messages[{i}] is not an object")
        role, content = msg.get("role"), msg.get("content")
        if role == "assistant":
            if parts:
                out.append(ModelRequest(parts=parts))
                parts = []
            reply = {k: msg[k] for k in ("content", "tool_calls") if msg.get(k) is not None}
            out.append(model_response(reply or "", model_name))
        elif role in ("system", "user") and isinstance(content, str):
            parts.append(SystemPromptPart(content) if role == "system" else UserPromptPart(content))
        elif role == "tool" and isinstance(msg.get("name"), str):
            parts.append(
                ToolReturnPart(
                    tool_name=msg["name"], content=content, tool_call_id=str(msg.get("tool_call_id") or "")
                )
            )
        else:
            raise ValueError(
                f"messages[{i}]: a message is system/user with text content, assistant, or tool with a name"
            )
    if parts:
        out.append(ModelRequest(parts=parts))
    if not isinstance(out[-1], ModelRequest):
        raise ValueError("an edited model request ends with a request (system, user or tool message)")
    return out


def tool_args(value: Any, tool: Any) -> dict[str, Any]:
    """Edited tool arguments, validated by the tool's own arguments validator (the one the framework
    ran on the model's arguments, `ToolsetTool.args_validator`) when there is one."""
    if not isinstance(value, dict):
        raise ValueError(f"tool arguments are an object, not {type(value).__name__}")
    validator = getattr(tool, "args_validator", None)
    if validator is None:
        return dict(value)
    try:
        validated = validator.validate_python(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(
            f"invalid arguments: {'.'.join(map(str, first.get('loc', ())))} {first.get('msg')}"
        ) from None
    return dict(validated) if isinstance(validated, dict) else dict(value)


def _return_annotation(function: Callable[..., Any]) -> Any:
    try:
        annotation = inspect.signature(function).return_annotation
    except (TypeError, ValueError):
        return inspect.Signature.empty
    if isinstance(annotation, str):  # `from __future__ import annotations`: resolve it the function's way
        try:
            annotation = inspect.get_annotations(function, eval_str=True).get("return", Any)
        except Exception:
            return inspect.Signature.empty
    return annotation


@functools.lru_cache(maxsize=256)
def _validator(function: Callable[..., Any]) -> Callable[[Any], Any] | None:
    """The validator of `function`'s declared return type (None: it declares none). Built once per
    function, and only when a value is injected: building a TypeAdapter costs more than a tool call."""
    annotation = _return_annotation(function)
    if annotation is inspect.Signature.empty or annotation is Any:
        return None
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    name = getattr(annotation, "__name__", None) or str(annotation)

    def validate(value: Any) -> Any:
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            raise ValueError(
                f"the injected tool result is not a {name}: {exc.errors()[0].get('msg', exc)}"
            ) from None

    return validate


def tool_result(function: Callable[..., Any] | None, value: Any) -> Any:
    """An injected tool result, validated against the tool function's return annotation when it
    declares one (a ValueError names the type: the gate holds again), else the JSON as it is."""
    if function is None:
        return value
    try:
        validate = _validator(function)
    except TypeError:  # an unhashable callable: no cache, build it this once
        validate = _validator.__wrapped__(function)
    return value if validate is None else validate(value)
