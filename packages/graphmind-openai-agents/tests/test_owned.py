"""Owned payloads (docs/adapters.md) and the per-run fast paths: a function tool's JSON arguments are
claimed owned (core's owned_copy checks their leaves), anything else (a NaN, a lone surrogate) takes
the full pass, and what is recorded is the same JSON either way; the first-message key stays a key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

import graphmind
from graphmind._events.pipeline import EventPipeline
from graphmind.adapter import Owned, owned_copy
from graphmind.testing import FakeHub
from graphmind_openai_agents import instrument_openai_agents, uninstrument_openai_agents
from graphmind_openai_agents._describe import _reader, describe_request, reply_of, tool_input
from graphmind_openai_agents._inject import stream_reply

ARGUMENTS = '{"city": "Cairo \u2713", "days": [2, 3], "budget": 99.5, "hot": true, "guide": null}'


def _owned(arguments: str) -> bool:
    """What the tool row claims of these arguments (_tools.py: core's owned_copy of the parsed value)."""
    copy, owned = owned_copy(tool_input(arguments))
    if owned:
        assert copy == tool_input(arguments)
    return owned


@pytest.mark.parametrize(
    "arguments",
    [
        ARGUMENTS,
        "{}",
        "",
        '"text"',
        "3",
        "not json",
        '{"city": {"name": "Cairo"}}',  # nested: copied, claimed
        '{"days": [1, 2]}',
        "[1, 2]",
    ],
)
def test_json_arguments_are_owned(arguments: str) -> None:
    assert _owned(arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        '{"x": NaN}',
        '{"x": Infinity}',
        '{"days": [1, -Infinity]}',
        '{"x": "\\ud800"}',  # a lone surrogate in a value
        '{"\\udc00": 1}',  # and in a key
    ],
)
def test_anything_else_is_not_claimed(arguments: str) -> None:
    assert not _owned(arguments)


def test_field_reads_dicts_mappings_and_objects() -> None:
    class Item:
        role = "user"

    class Mapped(dict[str, Any]):
        pass

    assert _reader({"role": "user"})("role", None) == "user"
    assert _reader(Mapped(role="system"))("role", None) == "system"
    assert _reader(Item())("role", None) == "user" and _reader(Item())("content", None) is None


def test_the_first_message_key_tells_prompts_apart_and_holds_as_the_transcript_grows() -> None:
    def key(instructions: str, items: Any) -> str:
        return describe_request("a", "m", instructions, items, (), (), False)[1]

    first = [{"role": "user", "content": "Plan a day in Cairo"}]
    grown = [*first, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]
    assert key("Plan.", first) == key("Plan.", grown) == key("Plan.", "Plan a day in Cairo")
    assert key("Plan.", first) != key("Other.", first)
    assert key("Plan.", first) != key("Plan.", [{"role": "user", "content": "Plan a day in Giza"}])
    assert key("Plan.", first) != key("Plan.", [{"role": "system", "content": "Plan a day in Cairo"}])


def test_a_request_is_claimed_owned_only_when_every_leaf_is_a_json_scalar() -> None:
    def claimed(agent: str, instructions: str, content: Any) -> bool:
        items = [{"role": "user", "content": content}, {"type": "function_call_output", "call_id": "c"}]
        return type(describe_request(agent, "m", instructions, items, (), (), False)) is Owned

    assert claimed("a", "Plan.", "hi ✓")
    assert claimed("a", "Plan.", 1.5) and claimed("a", "Plan.", None)
    assert not claimed("a", "Plan.", "lone \udc00")  # a message's leaf
    assert not claimed("a", "lone \ud800", "hi")  # the instructions (not only the messages)
    assert not claimed("agent \ud800", "Plan.", "hi")  # the agent's name
    assert type(describe_request("a", "m", None, "text \ud800", (), (), True)) is not Owned


def _message(text: str) -> ResponseOutputMessage:
    part = ResponseOutputText(type="output_text", text=text, annotations=[])
    return ResponseOutputMessage(id="m", type="message", role="assistant", status="completed", content=[part])


def _completed(output: list[Any]) -> ResponseCompletedEvent:
    response = Response(
        id="r",
        created_at=0.0,
        model="m",
        object="response",
        output=output,
        parallel_tool_calls=True,
        tool_choice="auto",
        tools=[],
        status="completed",
    )
    return ResponseCompletedEvent(type="response.completed", response=response, sequence_number=1)


def test_a_reply_is_claimed_owned_only_when_every_leaf_is_a_json_scalar() -> None:
    call = ResponseFunctionToolCall(type="function_call", call_id="c1", name="f", arguments='{"a": 1}')
    odd_call = ResponseFunctionToolCall(type="function_call", call_id="c1", name="f", arguments="\ud800")
    assert reply_of([_message("Done ✓"), call]) == (
        {
            "role": "assistant",
            "content": "Done ✓",
            "tool_calls": [{"id": "c1", "name": "f", "arguments": '{"a": 1}'}],
        },
        True,
    )
    assert not reply_of([_message("lone \udc00")])[1]
    assert not reply_of([odd_call])[1]
    # a streamed reply: the stream loop records an Owned answer without the pipeline's copy
    assert type(stream_reply([_completed([_message("Done.")])])) is Owned
    assert type(stream_reply([_completed([_message("lone \udc00")])])) is not Owned
    assert stream_reply([_completed([_message("Done.")])]) == (
        {"role": "assistant", "content": "Done."},
        None,
    )


class _Model(Model):
    """A tool call, then text: no I/O."""

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        answered = not isinstance(input, str) and any(
            isinstance(i, dict) and i.get("type") == "function_call_output" for i in input
        )
        output: list[Any]
        if answered:
            text = ResponseOutputText(type="output_text", text="Done.", annotations=[])
            output = [
                ResponseOutputMessage(
                    id="m", type="message", role="assistant", status="completed", content=[text]
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    type="function_call", call_id="c1", name="weather", arguments=ARGUMENTS
                )
            ]
        return ModelResponse(output=output, usage=Usage(requests=1), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


@function_tool
def weather(city: str, days: list[int], budget: float, hot: bool, guide: str | None) -> str:
    """The weather."""
    return f"sunny in {city}"


CLAIMS: list[tuple[Any, Any, bool]] = []  # (type, nodeId, owned) of each event, claims honoured


async def _recorded(claims: bool, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    original = EventPipeline._plain_trusted
    if not claims:  # the pipeline ignores every owned claim: each payload gets its snapshot copy
        monkeypatch.setattr(
            EventPipeline,
            "_plain_trusted",
            lambda self, event, owned=False, payload=None, measured=0: original(
                self, event, False, payload, measured
            ),
        )
    else:

        def noting(
            self: EventPipeline,
            event: dict[str, Any],
            owned: bool = False,
            payload: tuple[str, ...] | None = None,
            measured: int = 0,
        ) -> Any:
            CLAIMS.append((event.get("type"), event.get("nodeId"), owned))
            return original(self, event, owned, payload, measured)

        CLAIMS.clear()
        monkeypatch.setattr(EventPipeline, "_plain_trusted", noting)
    try:
        with FakeHub() as hub:
            client = graphmind.Client(app="agents-owned", url=hub.url, retry_interval=0.2)
            try:
                assert client.ready(5)
                assert instrument_openai_agents(session=client)
                agent = Agent(name="planner", instructions="Plan.", tools=[weather], model=_Model())
                assert (await Runner.run(agent, "Plan a day in Cairo")).final_output == "Done."
                hub.wait_for(lambda: len(hub.of_type("run.finished")) == 1, what="the run finished")
                return [
                    (e["type"], e.get("nodeId"), e.get("input"), e.get("attrs"), e.get("output"))
                    for e in hub.events
                    if e.get("type") in ("node.started", "node.finished")
                ]
            finally:
                uninstrument_openai_agents()
                client.dispose()
    finally:
        monkeypatch.setattr(EventPipeline, "_plain_trusted", original)


async def test_recorded_events_are_the_same_json_owned_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    owned, copied = await _recorded(True, monkeypatch), await _recorded(False, monkeypatch)
    assert owned == copied
    (tool,) = [e for e in owned if e[0] == "node.started" and e[1] == "tool:weather"]
    assert tool[2] == {"city": "Cairo \u2713", "days": [2, 3], "budget": 99.5, "hot": True, "guide": None}
    assert tool[3] == {"framework": "openai-agents", "callId": "c1"}
    assert ("node.started", "tool:weather", True) in CLAIMS  # nested arguments claimed (owned_copy)
