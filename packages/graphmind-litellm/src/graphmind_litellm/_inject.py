"""An injected JSON value -> what LiteLLM's `mock_response` takes, so LiteLLM builds its own type.

The one model-reply shape of every adapter (a string: the assistant text; an object:
`{"content", "tool_calls": [{"id"?, "name", "arguments" | "args"}]}`) becomes a `ModelResponse`;
LiteLLM's full body form (an object with `choices`) is taken as is. Handed to the real function as
`mock_response=`, LiteLLM answers without any HTTP request and returns its own `ModelResponse`, or
for `stream=True` its own `CustomStreamWrapper` that yields the reply chunk by chunk
(litellm/main.py `mock_completion`: a `ModelResponse` is returned as is, or converted to a stream).

Every converter raises `ValueError` with a readable message on a shape it cannot use: the engine then
holds the gate again with a warning, and nothing is lost.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from litellm import ModelResponse
from litellm.types.utils import ChatCompletionMessageToolCall, Choices, Message

_REPLY_SHAPE = 'a string, or {"content": ..., "tool_calls": [{"name": ..., "arguments": {...}}]}'


def _arguments(call: Mapping[str, Any]) -> str:
    args = call.get("arguments", call.get("args", {}))
    if isinstance(args, str):
        return args
    try:
        return json.dumps(args, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"tool call arguments must be JSON: {exc}") from None


def _call_id(name: str, arguments: str, index: int) -> str:
    digest = hashlib.sha256(f"{index}:{name}:{arguments}".encode()).hexdigest()[:24]
    return f"call_gm{digest}"


def tool_calls_of(value: Any) -> list[ChatCompletionMessageToolCall]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ValueError(f"tool_calls must be a list of objects; the reply shape is {_REPLY_SHAPE}")
    calls = []
    for index, call in enumerate(value):
        if not isinstance(call, Mapping):
            raise ValueError(
                f"tool_calls[{index}] must be an object with a name; the reply shape is {_REPLY_SHAPE}"
            )
        function = call.get("function") if isinstance(call.get("function"), Mapping) else call
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"tool_calls[{index}] has no name; the reply shape is {_REPLY_SHAPE}")
        arguments = _arguments(function)
        call_id = call.get("id") or _call_id(name, arguments, index)
        calls.append(
            ChatCompletionMessageToolCall(
                id=call_id, type="function", function={"name": name, "arguments": arguments}
            )
        )
    return calls


def model_response(value: Any, model: Any = None) -> ModelResponse:
    """A chat reply for `mock_response`: the reply shape, LiteLLM's full body, or a `ModelResponse`."""
    if isinstance(value, ModelResponse):
        return value
    if isinstance(value, Mapping) and "choices" in value:
        try:
            return ModelResponse(**value)
        except Exception as exc:
            raise ValueError(f"not a ModelResponse body ({type(exc).__name__}: {exc})") from None
    if isinstance(value, str):
        content: Any = value
        calls: list[ChatCompletionMessageToolCall] = []
    elif isinstance(value, Mapping) and ("content" in value or "tool_calls" in value):
        content = value.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"content must be a string or null; the reply shape is {_REPLY_SHAPE}")
        calls = tool_calls_of(value.get("tool_calls") or [])
    else:
        raise ValueError(f"cannot use {type(value).__name__} as a model reply; inject {_REPLY_SHAPE}")
    message = Message(role="assistant", content=content, tool_calls=calls or None)
    choice = Choices(index=0, message=message, finish_reason="tool_calls" if calls else "stop")
    response = ModelResponse(choices=[choice])
    if isinstance(model, str):
        response.model = model
    return response


def text_reply(value: Any, model: Any = None) -> str:
    """`text_completion` / `responses`: LiteLLM mocks these from a string only."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str) and not value.get("tool_calls"):
        return str(value["content"])
    raise ValueError(
        f"inject a string here (this API's mock_response takes text only), got {type(value).__name__}"
    )


def embedding_reply(value: Any, model: Any = None) -> list[float]:
    """`embedding`: one vector, a list of numbers (litellm/litellm_core_utils/mock_functions.py `mock_embedding`)."""
    if (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and all(isinstance(v, int | float) for v in value)
    ):
        return [float(v) for v in value]
    raise ValueError("inject one embedding vector, a list of numbers")
