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
