"""Owned payloads (docs/adapters.md): the Messages describers claim a node's input / output only when
they built every container of it and every leaf is a plain JSON scalar; anything else (a tool_use's
`input` dict, an app object, a lone surrogate, NaN) takes the pipeline's full pass."""

from __future__ import annotations

import enum
import math
import random
from typing import Any

import pytest
from anthropic.types import Message

from graphmind import protocol as proto
from graphmind._events.jsonsafe import to_jsonable
from graphmind.adapter.stainless import Owned
from graphmind_anthropic._describe import (
    _KEY_TEXT,
    describe_message,
    describe_reply,
    describe_request,
    first_key,
)
from graphmind_anthropic._inject import message_body


class Role(str, enum.Enum):
    USER = "user"


class Odd:
    pass


PLAIN: list[dict[str, Any]] = [
    {"role": "user", "content": "Plan a day in Cairo – naïvely ✓"},
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "Sure"}, {"type": "thinking", "thinking": "hm"}],
    },
    {"role": "user", "content": [{"type": "image", "source": {}}]},
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "x"}]}],
    },
]
TOOLS = [{"name": "search_flights", "input_schema": {"type": "object"}}]


@pytest.mark.parametrize("system", [None, "You plan trips.", [{"type": "text", "text": "You plan."}]])
def test_a_request_it_built_of_plain_leaves_is_owned(system: Any) -> None:
    body: dict[str, Any] = {"model": "m", "messages": PLAIN, "tools": TOOLS, "max_tokens": 5}
    if system is not None:
        body["system"] = system
    described = describe_request(body)
    assert type(described) is Owned
    node_input, _, length = described
    assert length == 4 and node_input["tools"] == ["search_flights"]
    assert all(m is not p for m, p in zip(node_input["messages"], PLAIN, strict=True))


@pytest.mark.parametrize(
    "message",
    [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": Odd()}],
        },
        {"role": "user", "content": Odd()},
        {"role": "user", "content": {"an": "app dict"}},
        {"role": "user", "content": "lone \ud800"},
        {"role": Role.USER, "content": "a StrEnum role"},
        {"role": "user", "content": [{"type": "text", "text": math.nan}, {"type": "image"}]},
        ("a", "tuple"),
    ],
)
def test_anything_else_falls_back_to_the_full_pass(message: Any) -> None:
    described = describe_request({"model": "m", "messages": [PLAIN[0], message]})
    assert type(described) is tuple


@pytest.mark.parametrize("model", [math.inf, Odd()])
def test_a_model_that_is_not_a_plain_scalar_falls_back(model: Any) -> None:
    assert type(describe_request({"model": model, "messages": PLAIN[:1]})) is tuple


@pytest.mark.parametrize("system", [None, 'sys " é \x00', "lone \udc00", ["a", "list"], 3])
@pytest.mark.parametrize(
    "first",
    [
        {"role": "user", "content": "plain ✓ \n"},
        {"role": "user", "content": None},
        {"content": "x", "role": "user"},
        {"role": "user", "content": ["a", {"type": "tool_use"}]},
        {"role": Role.USER, "content": "x"},
        None,
        "a string",
    ],
)
def test_the_first_message_key_is_the_text_it_always_was(system: Any, first: Any) -> None:
    assert first_key(system, first) == _KEY_TEXT({"system": system, "first": first})


def test_a_text_reply_is_owned_and_a_tool_use_reply_is_not() -> None:
    text = message_body({"content": "Visit Giza ✓"}, {"model": "m"})
    text["usage"] = {"input_tokens": 1, "output_tokens": 2, "cache_read_input_tokens": 4}
    assert type(describe_reply(text)) is Owned
    assert type(describe_message(Message.model_validate(text))) is Owned
    tool = message_body(
        {"content": "Hi", "tool_calls": [{"id": "t1", "name": "f", "args": {"a": 1}}]}, {"model": "m"}
    )
    # the call's `arguments` is the SDK object's own `input` dict: the snapshot copies it
    assert type(describe_reply(tool)) is tuple
    assert type(describe_message(Message.model_validate(tool))) is tuple


def test_a_reply_with_odd_leaves_falls_back() -> None:
    body = message_body({"content": "x"}, {"model": "m"})
    body["usage"] = {"input_tokens": math.nan, "output_tokens": 1}
    assert type(describe_reply(body)) is tuple
    body = message_body({"content": "lone \udfff"}, {"model": "m"})
    assert type(describe_reply(body)) is tuple


def _containers(value: Any, found: set[int]) -> set[int]:
    """The ids of every dict and list reachable from `value` (tuples walked through)."""
    if isinstance(value, dict):
        found.add(id(value))
        for v in value.values():
            _containers(v, found)
    elif isinstance(value, list):
        found.add(id(value))
        for v in value:
            _containers(v, found)
    elif isinstance(value, tuple):
        for v in value:
            _containers(v, found)
    return found


def _assert_truly_owned(body: Any, described: Any) -> None:
    """What an `Owned` answer promises: no container of the app's inside it, and the JSON the hub
    gets equal to the full pass's (`to_jsonable`)."""
    if type(described) is not Owned:
        return
    value = described[0]
    assert not _containers(value, set()) & _containers(body, set()), (
        "the app's container is recorded as owned"
    )
    assert proto.encode(value) == proto.encode(to_jsonable(value))


@pytest.mark.parametrize(
    "text",
    [{"an": "app dict"}, {}, {1: "int key", "1": "str key"}, {("t",): "tuple key"}, {"k": {"nested": 1}}],
)
def test_a_text_block_whose_text_is_an_app_dict_is_never_owned_by_reference(text: Any) -> None:
    # `_text_of` put the app's dict itself among the parts, and `_plain_parts` took any dict of
    # scalars for one it built: the recorded input then held the app's mutable dict (and a
    # tuple key made the event unencodable: dropped at send time instead of recorded).
    body = {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}
    _assert_truly_owned(body, describe_request(body))


def test_owned_requests_never_hold_app_containers_and_write_the_full_pass_json() -> None:
    rng = random.Random(17)
    leaves: list[Any] = ["x", "é", "\ud800", Role.USER, 1, True, None, 1.5, math.nan, ("t",)]

    def value(depth: int = 0) -> Any:
        roll = rng.random()
        if depth > 1 or roll < 0.5:
            return rng.choice(leaves)
        if roll < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 2))]
        keys: list[Any] = ["type", "text", "id", "name", "input", "content", 1, ("t",)]
        return {rng.choice(keys): value(depth + 1) for _ in range(rng.randint(0, 3))}

    def block() -> dict[str, Any]:
        kind = rng.choice(["text", "tool_use", "tool_result", "thinking", "image"])
        fields = ["text", "id", "name", "input", "content", "thinking", "tool_use_id", "is_error"]
        return {"type": kind, **{k: value() for k in fields if rng.random() < 0.5}}

    owned = 0
    for _ in range(3000):
        content = rng.choice([value(), [block() for _ in range(rng.randint(0, 3))]])
        body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": content}]}
        if rng.random() < 0.3:
            body["system"] = [block()]
        try:
            described = describe_request(body)
        except Exception:  # a malformed body the describer refuses: the stainless layer warns
            continue
        owned += type(described) is Owned
        _assert_truly_owned(body, described)
    assert owned > 100  # the property was checked on owned answers, not only on fallbacks
