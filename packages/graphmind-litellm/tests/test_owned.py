"""Owned payloads (docs/adapters.md): `completion`'s describers claim a node's input / output only when
they built every container of it and every leaf is a plain JSON scalar; anything else (an app's
nested content, a typed message with odd leaves, a lone surrogate, NaN) takes the full pass."""

from __future__ import annotations

import enum
import math
from types import SimpleNamespace
from typing import Any

import pytest
from litellm import ModelResponse

from graphmind.adapter import Owned
from graphmind_litellm._describe import chat_request, chat_result


class Role(str, enum.Enum):
    USER = "user"


class Odd:
    pass


PLAIN: list[Any] = [
    {"role": "system", "content": "You plan trips."},
    {"role": "user", "content": "Plan a day in Cairo – naïvely ✓", "name": "ana"},
]
TOOLS = [{"type": "function", "function": {"name": "search_flights", "parameters": {}}}]


def test_plain_dict_messages_are_copied_and_owned() -> None:
    described = chat_request({"model": "gpt", "messages": PLAIN, "tools": TOOLS, "stream": True})
    assert type(described) is Owned
    node_input, key, length = described
    assert node_input["messages"] == PLAIN and length == 2 and node_input["tools"] == ["search_flights"]
    assert all(m is not p for m, p in zip(node_input["messages"], PLAIN, strict=True))
    assert key == "system\x00You plan trips."


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": [{"type": "text", "text": "a list: the app's"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"name": "f"}}]},
        {"role": "user", "content": Odd()},
        {"role": "user", "content": "lone \ud800"},
        {"role": Role.USER, "content": "a StrEnum role"},
        {"role": "user", "content": math.nan},
        {1: "an int key", "role": "user"},
        {"rôle\udc00": "a key with a lone surrogate"},
        SimpleNamespace(role=Role.USER, content="a typed message with a StrEnum role"),
        SimpleNamespace(role="user", content="x", name=["an", "app", "list"]),
    ],
)
def test_anything_else_falls_back_to_the_full_pass(message: Any) -> None:
    described = chat_request({"model": "gpt", "messages": [PLAIN[0], message, PLAIN[1]]})
    assert type(described) is tuple
    messages = described[0]["messages"]
    if type(message) is dict:
        assert messages[1] is message  # as before: the pipeline snapshots the app's own dict


@pytest.mark.parametrize("model", [math.inf, Odd(), None])
def test_a_model_that_is_not_a_plain_scalar_falls_back(model: Any) -> None:
    owned = type(chat_request({"model": model, "messages": PLAIN})) is Owned
    assert owned is (model is None)


def _response(message: dict[str, Any]) -> ModelResponse:
    return ModelResponse(
        model="gpt",
        choices=[{"index": 0, "message": message, "finish_reason": "stop"}],
        usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    )


def test_a_reply_read_off_the_model_response_is_owned_unless_a_leaf_is_odd() -> None:
    plain = chat_result(_response({"role": "assistant", "content": "Visit Giza ✓"}))
    assert type(plain) is Owned and plain[0]["content"] == "Visit Giza ✓"
    calls = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    assert type(chat_result(_response(calls))) is Owned
    odd = _response({"role": "assistant", "content": "x"})
    odd.choices[0].message.content = ["not", "text"]  # type: ignore[union-attr]
    assert type(chat_result(odd)) is tuple
    surrogate = _response({"role": "assistant", "content": "lone \udfff"})
    assert type(chat_result(surrogate)) is tuple
