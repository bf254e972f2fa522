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

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_ai.messages import ModelResponse, ModelResponsePart, TextPart, ToolCallPart

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


def _return_annotation(function: Callable[..., Any] | None) -> Any:
    if function is None:
        return inspect.Signature.empty
    try:
        return inspect.signature(function).return_annotation
    except (TypeError, ValueError):
        return inspect.Signature.empty


def tool_result(function: Callable[..., Any] | None) -> Callable[[Any], Any]:
    """The converter of one tool's injected result: validated against its return annotation when
    it declares one (a ValueError names the type: the gate holds again), else the JSON as it is."""
    annotation = _return_annotation(function)
    if annotation is inspect.Signature.empty or annotation is Any:
        return lambda value: value
    if isinstance(annotation, str):  # `from __future__ import annotations`: resolve it the function's way
        try:
            annotation = inspect.get_annotations(function, eval_str=True).get("return", Any)  # type: ignore[arg-type]
        except Exception:
            return lambda value: value
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)

    def convert(value: Any) -> Any:
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            raise ValueError(
                f"the injected tool result is not a {getattr(annotation, '__name__', annotation)!s}: "
                f"{exc.errors()[0].get('msg', exc)}"
            ) from None

    return convert
