"""Owned payloads (docs/adapters.md): the describers copy plain JSON values directly and claim a
node's input / output only when they built every container and every leaf is a `json_scalar`;
anything else (NaN, bytes, an app object, a lone surrogate, a str subclass) takes the JSON round
trip and the pipeline's full pass, and what is recorded is the same JSON either way."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import pytest
from adk_helpers import Counter, ScriptedLlm, agent, collect, runner, tool_script
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import BaseModel

import graphmind
from graphmind import protocol as proto
from graphmind._events.jsonsafe import to_jsonable
from graphmind._events.pipeline import EventPipeline
from graphmind.adapter import Owned
from graphmind.testing import FakeHub
from graphmind_google_adk import instrument_runner
from graphmind_google_adk._describe import _round_trip, plain, plain_owned, request_input
from graphmind_google_adk._plugin import _model_result, _tool_result


class Colour(enum.IntEnum):
    RED = 1


class Name(str):
    pass


class Shape(BaseModel):
    sides: int = 3


PLAIN_VALUES: list[Any] = [
    {"city": "Cairo", "days": 2, "hot": True, "rain": None, "temp": 31.5, "zero": -0.0},
    {"nested": {"list": [1, "two", [3.0, {"deep": "é ✓"}]], "empty": {}}, "tuple": (1, 2)},
    ["a", 10**40, False],
    "plain text",
    42,
    None,
]

ODD_VALUES: list[Any] = [
    {"x": math.nan},
    {"x": math.inf},
    {"x": b"bytes"},
    {"x": "lone \ud800 surrogate"},
    {"lone \udc00": 1},
    {"x": Colour.RED},
    {"x": Name("sub")},
    {1: "int key"},
    {"x": Shape()},
    {"x": object()},
    {"x": {"y": {1, 2}}},
]


def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"d": value}
    return value


@pytest.mark.parametrize("value", [*PLAIN_VALUES, _deep(30)])
def test_plain_values_are_copied_directly_owned_and_equal_to_the_round_trip(value: Any) -> None:
    copy, owned = plain_owned(value)
    assert owned
    assert copy == _round_trip(value)
    assert json.dumps(copy) == json.dumps(_round_trip(value))
    assert to_jsonable(copy) == copy  # what the pipeline's walk would have made of it


@pytest.mark.parametrize("value", [*ODD_VALUES, _deep(40)])
def test_anything_else_takes_the_round_trip_and_is_not_claimed(value: Any) -> None:
    copy, owned = plain_owned(value)
    assert not owned
    assert json.dumps(copy, default=str) == json.dumps(_round_trip(value), default=str)
    assert plain(value) == copy


def test_the_copy_shares_no_container_with_the_app() -> None:
    args = {"cities": ["Cairo"], "opts": {"fast": True}}
    copy = plain(args)
    args["cities"].append("Giza")
    args["opts"]["fast"] = False
    assert copy == {"cities": ["Cairo"], "opts": {"fast": True}}


def test_a_cycle_still_fails_as_the_round_trip_does() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(ValueError, match="Circular"):
        plain(loop)


def _request(response: Any) -> LlmRequest:
    return LlmRequest(
        model="scripted",
        contents=[
            types.Content(role="user", parts=[types.Part(text="weather in Cairo?")]),
            types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(id="c1", name="weather", args={"city": "Cairo"})
                    )
                ],
            ),
            types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(id="c1", name="weather", response=response)
                    )
                ],
            ),
        ],
        config=types.GenerateContentConfig(system_instruction="Be brief."),
    )


def test_a_request_of_plain_parts_is_owned_and_an_odd_tool_result_is_not() -> None:
    plain_request = request_input(_request({"sky": "clear"}), "assistant")
    assert type(plain_request) is Owned
    odd = request_input(_request({"sky": math.nan}), "assistant")
    assert type(odd) is not Owned
    assert odd[0]["messages"][-1]["content"] == {"sky": "NaN"}  # the round trip's spelling, as before
    assert odd[1:] == plain_request[1:]
    surrogate = request_input(_request({"sky": "clear"}), "agent \ud800")
    assert type(surrogate) is not Owned


def test_a_reply_and_a_tool_result_say_whether_they_are_owned() -> None:
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=12, candidates_token_count=5, total_token_count=17
    )
    reply = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="Clear.")]), usage_metadata=usage
    )
    described = _model_result(reply)
    assert type(described) is Owned
    assert described == (
        {"role": "assistant", "content": "Clear."},
        {"inputTokens": 12, "outputTokens": 5, "totalTokens": 17},
    )
    call = LlmResponse(
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(id="c", name="f", args={"x": math.nan}))],
        )
    )
    assert type(_model_result(call)) is not Owned
    assert type(_tool_result({"sky": "clear"})) is Owned
    assert type(_tool_result({"sky": b"raw"})) is not Owned
    assert _tool_result({"sky": b"raw"}) == ({"sky": "<3 bytes>"}, None)


def _recorded(hub: FakeHub) -> list[tuple[str, Any, Any]]:
    return [
        (e["type"], e.get("nodeId"), e.get("input", e.get("output")))
        for e in hub.events
        if e.get("type") in (proto.NODE_STARTED, proto.NODE_FINISHED)
    ]


async def _invoke(claims: bool, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any, Any]]:
    original = EventPipeline._plain_trusted
    if not claims:  # the pipeline ignores every owned claim: each payload gets its snapshot copy
        monkeypatch.setattr(
            EventPipeline,
            "_plain_trusted",
            lambda self, event, owned=False, payload=None, measured=0: original(
                self, event, False, payload, measured
            ),
        )
    tools, model = (
        Counter(),
        ScriptedLlm(script=tool_script("weather", {"city": "Cairo ✓", "days": [1, 2.5]})),
    )
    try:
        with FakeHub(pause_on_error="off") as hub:
            client = graphmind.Client(app="adk-owned", url=hub.url, retry_interval=0.2)
            try:
                assert client.ready(5)
                await collect(instrument_runner(runner(agent(model, [tools.weather])), session=client))
                hub.wait_for(lambda: len(hub.of_type(proto.NODE_FINISHED)) >= 4, what="4 nodes finished")
                return _recorded(hub)
            finally:
                client.dispose()
    finally:
        monkeypatch.setattr(EventPipeline, "_plain_trusted", original)


async def test_recorded_events_are_the_same_json_owned_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    owned, copied = await _invoke(True, monkeypatch), await _invoke(False, monkeypatch)
    assert owned == copied
    tool_input = [
        payload for kind, node, payload in owned if node == "tool:weather" and kind == proto.NODE_STARTED
    ]
    assert tool_input == [{"city": "Cairo ✓", "days": [1, 2.5]}]
