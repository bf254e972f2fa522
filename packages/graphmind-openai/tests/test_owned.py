"""Owned payloads (docs/adapters.md): the chat describers claim a node's input / output only when they
built every container of it and every leaf is a plain JSON scalar; anything else takes the full pass."""

from __future__ import annotations

import copy
import enum
import json
import math
from typing import Any

import pytest
from openai.types.chat import ChatCompletion
from openai_shapes import MODEL, TEXT, TOOL_CALL, TOOLS
from pydantic import BaseModel

import graphmind
from graphmind._events.pipeline import EventPipeline
from graphmind._events.redaction import RedactionSwitches
from graphmind.adapter.stainless import Owned
from graphmind_openai import instrument_openai
from graphmind_openai._chat import describe_model, describe_reply, describe_request
from graphmind_openai._common import _KEY_TEXT, first_key
from graphmind_openai.testing import FakeOpenAI


class Role(str, enum.Enum):
    USER = "user"


class Odd:
    def __init__(self) -> None:
        self.text = "hi"


class Part(BaseModel):
    role: str = "user"
    content: str = "hi"


class Name(str):
    pass


PLAIN: list[dict[str, Any]] = [
    {"role": "system", "content": "You plan trips."},
    {"role": "user", "content": "Plan a day in Cairo – naïvely ✓"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "42"},
    {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {}}]},
]


def test_a_request_it_built_of_plain_leaves_is_owned() -> None:
    described = describe_request({"model": MODEL, "messages": PLAIN, "tools": TOOLS})
    assert type(described) is Owned
    node_input, _, length = described
    assert length == len(PLAIN) and node_input["tools"] == ["search_flights"]
    # nothing of it is the app's: every container is new
    assert all(m is not p for m, p in zip(node_input["messages"], PLAIN, strict=True))


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": Odd()},  # an app object as content
        {"role": "user", "content": ("a", "tuple")},  # a tuple: the snapshot makes it a list
        Part(),  # a pydantic model as the message: passed through, not copied
        {"role": "user", "content": "lone \ud800 surrogate"},  # the snapshot replaces it
        {"role": Role.USER, "content": "a StrEnum role"},
        {"role": "user", "content": "x", "name": ["an", "app", "list"]},
        {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]},
        {"role": "assistant", "tool_calls": ["not a call"]},
        {"role": "user", "content": math.nan},
        "a bare string message",
    ],
)
def test_anything_else_falls_back_to_the_full_pass(message: Any) -> None:
    described = describe_request({"model": MODEL, "messages": [*PLAIN[:2], message]})
    assert type(described) is tuple
    assert described == describe_request({"model": MODEL, "messages": [*PLAIN[:2], message]})


@pytest.mark.parametrize("model", [math.nan, Name("gpt"), Odd(), ["gpt"]])
def test_a_model_that_is_not_a_plain_scalar_falls_back(model: Any) -> None:
    assert type(describe_request({"model": model, "messages": PLAIN[:1]})) is tuple


def test_a_tool_name_of_a_str_subclass_falls_back() -> None:
    tools = [{"type": "function", "function": {"name": Name("search")}}]
    assert type(describe_request({"model": MODEL, "messages": PLAIN[:1], "tools": tools})) is tuple


@pytest.mark.parametrize(
    "first",
    [
        {"role": "user", "content": "plain"},
        {"role": "system", "content": 'quotes " \\ and \n\t control \x00 é ✓ \U0001f600'},
        {"role": "user", "content": "lone \ud800"},
        {"role": "user", "content": ""},
        {"role": "user", "content": None},
        {"role": "assistant", "content": "x", "tool_calls": []},
        {"content": "x", "role": "user"},
        {"role": "user", "name": "n"},
        {"role": Role.USER, "content": "enum"},
        "a string",
        None,
        7,
    ],
)
def test_the_first_message_key_is_the_text_it_always_was(first: Any) -> None:
    assert first_key(first) == _KEY_TEXT(first)


def _body(reply: Any) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": MODEL,
        "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    }


@pytest.mark.parametrize(
    "reply",
    [
        {"role": "assistant", "content": "Visit Giza ✓"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
    ],
)
def test_a_reply_read_off_the_sdk_object_or_its_body_is_owned(reply: dict[str, Any]) -> None:
    body = _body(reply)
    typed = describe_model(ChatCompletion.model_validate(body))
    assert type(typed) is Owned and type(describe_reply(body)) is Owned
    assert typed == describe_reply(json.loads(json.dumps(body)))


def test_a_reply_with_odd_leaves_falls_back() -> None:
    # the SDK builds its result unvalidated (`construct`): a leaf may be anything the JSON held
    odd = ChatCompletion.model_validate(_body({"role": "assistant", "content": "x"}))
    odd.choices[0].message.content = {"not": "text"}  # type: ignore[assignment]
    assert type(describe_model(odd)) is tuple
    body = _body({"role": "assistant", "content": "lone \udfff"})
    assert type(describe_reply(body)) is tuple
    body = _body({"role": "assistant", "content": "x"})
    body["usage"]["total_tokens"] = math.inf
    assert type(describe_reply(body)) is tuple


class Seen(EventPipeline):
    def __init__(self) -> None:
        super().__init__(RedactionSwitches(), lambda _m: None)
        self.flags: list[tuple[str, bool, dict[str, Any]]] = []

    def process_sized(
        self,
        event: dict[str, Any],
        trusted: bool = False,
        owned: bool = False,
        payload: tuple[str, ...] | None = None,
        measured: int = 0,
    ) -> tuple[dict[str, Any], int] | None:
        before = copy.deepcopy(event)
        sized = super().process_sized(event, trusted, owned, payload, measured)
        self.flags.append((before["type"], owned, before))
        return sized


@pytest.mark.parametrize(("role", "owned"), [("user", True), (Role.USER, False)])
def test_a_call_hands_its_input_and_reply_over_owned_only_when_plain(
    fake: FakeOpenAI, role: Any, owned: bool
) -> None:
    session = graphmind.Client(app="t", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    seen = Seen()
    session._pipeline = seen
    fake.script([TEXT, TOOL_CALL])
    from openai import OpenAI

    client = instrument_openai(OpenAI(base_url=fake.base_url, api_key="k", max_retries=0), session=session)
    client.chat.completions.create(model=MODEL, messages=[{"role": role, "content": "hi"}])
    session.dispose()
    flags = [(t, o) for t, o, _ in seen.flags if t.startswith("node.")]
    assert flags == [("node.started", owned), ("node.finished", True)]
    reference = EventPipeline(RedactionSwitches(), lambda _m: None)
    for _, flag, event in seen.flags:  # the same event either way
        assert reference.process(copy.deepcopy(event), True, flag) == reference.process(event, True)


@pytest.mark.parametrize("stream", [False, True])
def test_the_async_and_the_streamed_paths_claim_the_same(fake: FakeOpenAI, stream: bool) -> None:
    import asyncio

    from openai import AsyncOpenAI

    session = graphmind.Client(app="t", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    seen = Seen()
    session._pipeline = seen
    fake.script([TEXT])
    client = instrument_openai(
        AsyncOpenAI(base_url=fake.base_url, api_key="k", max_retries=0), session=session
    )

    async def main() -> None:
        reply = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=stream
        )
        if stream:
            async for _ in reply:  # type: ignore[union-attr]
                pass
        await client.close()

    asyncio.run(main())
    session.dispose()
    flags = [(t, o) for t, o, _ in seen.flags if t in ("node.started", "node.finished")]
    assert flags == [("node.started", True), ("node.finished", True)]


def test_the_responses_describers_claim_plain_values_only() -> None:
    from graphmind_openai._responses import describe_reply as responses_reply
    from graphmind_openai._responses import describe_request as responses_request

    items = [
        {"role": "user", "content": "hi ✓"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
        {"type": "reasoning", "summary": [{"an": "app list"}]},
    ]
    assert type(responses_request({"model": MODEL, "input": "hi", "instructions": "be brief"})) is Owned
    assert type(responses_request({"model": MODEL, "input": items})) is Owned
    assert type(responses_request({"model": MODEL, "input": [*items, Odd()]})) is tuple
    assert type(responses_request({"model": MODEL, "input": "hi", "instructions": ["a", "list"]})) is tuple
    assert (
        type(responses_request({"model": MODEL, "input": [{"role": "user", "content": "\ud800"}]})) is tuple
    )
    body = {
        "model": MODEL,
        "status": "completed",
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "done"}]}],
        "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
    }
    assert type(responses_reply(body)) is Owned
    body["usage"]["total_tokens"] = math.nan
    assert type(responses_reply(body)) is tuple
