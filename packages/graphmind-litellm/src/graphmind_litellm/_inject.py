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

import json
from collections.abc import Mapping, Sequence
from typing import Any

from litellm import ModelResponse
from litellm.types.utils import ChatCompletionMessageToolCall, Choices, Message

from graphmind.adapter import parse_model_reply, request_message


def model_response(value: Any, model: Any = None) -> ModelResponse:
    """A chat reply for `mock_response`: core's reply shape (`parse_model_reply`), LiteLLM's full
    body (an object with `choices`), or a `ModelResponse`."""
    if isinstance(value, ModelResponse):
        return value
    if isinstance(value, Mapping) and "choices" in value:
        try:
            return ModelResponse(**value)
        except Exception as exc:
            raise ValueError(f"not a ModelResponse body ({type(exc).__name__}: {exc})") from None
    reply = parse_model_reply(value)  # raises ValueError naming the accepted shape
    calls = [
        ChatCompletionMessageToolCall(
            id=c.id,
            type="function",
            function={"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
        )
        for c in reply.tool_calls
    ]
    message = Message(role="assistant", content=reply.content, tool_calls=calls or None)
    choice = Choices(index=0, message=message, finish_reason="tool_calls" if calls else "stop")
    response = ModelResponse(choices=[choice])
    if isinstance(model, str):
        response.model = model
    return response


def edit_message(message: Any) -> Any:
    """A message of an edited input as a request message (OpenAI's shape, which LiteLLM takes): an
    assistant turn with tool calls goes through the same reply conversion as an inject above."""
    if isinstance(message, Mapping) and message.get("role") == "assistant" and message.get("tool_calls"):
        built = model_response({k: message[k] for k in ("role", "content", "tool_calls") if k in message})
        return built.choices[0].message.model_dump(exclude_none=True)
    return request_message(message)


def text_reply(value: Any, model: Any = None) -> str:
    """`text_completion` / `responses`: LiteLLM mocks these from a string only."""
    reply = parse_model_reply(value)
    if reply.tool_calls or reply.content is None:
        raise ValueError("inject text here: LiteLLM's mock for this API takes a string, not tool calls")
    return reply.content


def embedding_reply(value: Any, model: Any = None) -> list[float]:
    """`embedding`: one vector, a list of numbers (litellm/litellm_core_utils/mock_functions.py `mock_embedding`)."""
    if (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and all(isinstance(v, int | float) for v in value)
    ):
        return [float(v) for v in value]
    raise ValueError("inject one embedding vector, a list of numbers")
