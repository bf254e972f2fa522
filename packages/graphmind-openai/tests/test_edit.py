"""Edits beyond the gate matrix's (docs/protocol.md, "Editing a held call"): a tool dropped by name,
a message with parts kept in its own form, and the inject box's skeleton from the tool roster."""

from __future__ import annotations

from typing import Any

from openai import OpenAI

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai.testing import TRIP_MESSAGES, TRIP_TOOLS, FakeOpenAI


def _client(fake: FakeOpenAI, gm: graphmind.Client) -> OpenAI:
    return instrument_openai(OpenAI(base_url=fake.base_url, api_key="k", max_retries=0), session=gm)


def test_the_inject_box_offers_a_call_of_the_first_tool(
    fake: FakeOpenAI, fakehub: FakeHub, gm: graphmind.Client
) -> None:
    client = _client(fake, gm)
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("continue")
    client.chat.completions.create(model="gpt-test", messages=TRIP_MESSAGES, tools=TRIP_TOOLS)  # type: ignore[arg-type]
    paused = fakehub.of_type("exec.paused")[0]
    assert paused["injectSkeleton"] == {
        "content": None,
        "tool_calls": [{"name": "search_flights", "arguments": {"to": ""}}],
    }


def test_unchanged_parts_keep_the_requests_own_form(
    fake: FakeOpenAI, fakehub: FakeHub, gm: graphmind.Client
) -> None:
    client = _client(fake, gm)
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    messages: list[Any] = [
        {"role": "user", "content": [{"type": "text", "text": "What is this?"}, image]},
        {"role": "user", "content": "Answer briefly."},
    ]

    def edit(frame: dict[str, Any]) -> Any:
        edited = dict(frame["input"])
        edited["messages"] = [frame["input"]["messages"][0], {"role": "user", "content": "In French."}]
        edited["tools"] = []  # every tool dropped
        return ("continue", None, {"input": edited})

    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer(edit)
    client.chat.completions.create(model="gpt-test", messages=messages, tools=TRIP_TOOLS)  # type: ignore[arg-type]
    body = fake.requests[-1].body
    assert body["messages"] == [messages[0], {"role": "user", "content": "In French."}]  # the image kept
    assert body["tools"] == []


def test_an_unknown_tool_name_re_holds_with_the_reason(
    fake: FakeOpenAI, fakehub: FakeHub, gm: graphmind.Client
) -> None:
    client = _client(fake, gm)
    answers = [
        lambda frame: ("continue", None, {"input": {**frame["input"], "tools": ["book_hotel"]}}),
        lambda frame: ("continue", None),
    ]
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer(lambda frame: answers.pop(0)(frame))
    client.chat.completions.create(model="gpt-test", messages=TRIP_MESSAGES, tools=TRIP_TOOLS)  # type: ignore[arg-type]
    again = fakehub.of_type("exec.paused")[1]
    assert "unknown tool 'book_hotel': the request defines search_flights" in again["refused"]
    assert fake.requests[-1].body["tools"] == TRIP_TOOLS
