"""Tool node identity = the tool call id without `gm.tool_call` (issue 16 item 6): a small agent loop
against the fake provider, chat and responses, plain and streamed, sync and async; each gated tool
node's instanceId is the id of the call the model step asked for."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai import AsyncOpenAI, OpenAI

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI

MODEL = "gpt-4o-mini"
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("search", "read")
]
RESPONSES_TOOLS = [
    {"type": "function", "name": n, "parameters": {"type": "object"}} for n in ("search", "read")
]
CALLS = {
    "content": None,
    "tool_calls": [
        {"id": "call_s1", "name": "search", "arguments": '{"q": "cairo"}'},
        {"id": "call_r1", "name": "read", "arguments": '{"q": "page"}'},
        {"id": "call_s2", "name": "search", "arguments": '{"q": "giza"}'},
    ],
}


def _tools(gm: graphmind.Client) -> dict[str, Any]:
    return {
        "search": gm.wrap(lambda q: f"found {q}", name="search"),
        "read": gm.wrap(lambda q: q, name="read"),
    }


def _reply_calls(api: str, reply: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, id, args) of the calls in an SDK reply object (what an app's loop reads)."""
    if api == "chat":
        return [
            (c.function.name, c.id, json.loads(c.function.arguments))
            for c in reply.choices[0].message.tool_calls or []
        ]
    return [(i.name, i.call_id, json.loads(i.arguments)) for i in reply.output if i.type == "function_call"]


def _collect(api: str, events: list[Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """The calls of a streamed reply, read from its final event / accumulated chunks."""
    if api == "responses":
        done = [e for e in events if e.type == "response.completed"]
        return _reply_calls(api, done[0].response)
    calls: dict[int, dict[str, str]] = {}
    for chunk in events:
        for d in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            entry = calls.setdefault(d.index, {"id": "", "name": "", "args": ""})
            entry["id"] += d.id or ""
            entry["name"] += (d.function.name or "") if d.function else ""
            entry["args"] += (d.function.arguments or "") if d.function else ""
    return [(c["name"], c["id"], json.loads(c["args"])) for c in calls.values()]


def _request(api: str, stream: bool) -> dict[str, Any]:
    if api == "chat":
        return {
            "model": MODEL,
            "messages": [{"role": "user", "content": "trip"}],
            "tools": TOOLS,
            "stream": stream,
        }
    return {"model": MODEL, "input": "trip", "tools": RESPONSES_TOOLS, "stream": stream}


def _create(client: Any, api: str) -> Any:
    return client.chat.completions.create if api == "chat" else client.responses.create


def _tool_ids(hub: FakeHub) -> list[tuple[str, str]]:
    hub.wait_for(
        lambda: len([e for e in hub.of_type("node.finished") if e["kind"] == "tool"]) >= 3,
        what="3 tool nodes",
    )
    return [(e["name"], e["instanceId"]) for e in hub.of_type("node.started") if e["kind"] == "tool"]


EXPECTED = [("search", "call_s1"), ("read", "call_r1"), ("search", "call_s2")]
CASES = [("chat", False), ("chat", True), ("responses", False), ("responses", True)]


@pytest.mark.parametrize(("api", "stream"), CASES)
def test_a_sync_agent_loop_names_each_tool_node_after_its_call_id(
    fakehub: FakeHub, gm: graphmind.Client, fake: FakeOpenAI, api: str, stream: bool
) -> None:
    fake.script([CALLS, "done"])
    client = instrument_openai(OpenAI(base_url=fake.base_url, api_key="test"), session=gm)
    tools = _tools(gm)
    with gm.run("agent"):
        reply = _create(client, api)(**_request(api, stream))
        calls = _collect(api, list(reply)) if stream else _reply_calls(api, reply)
        assert [c[1] for c in calls] == ["call_s1", "call_r1", "call_s2"]
        for name, _id, args in calls:
            tools[name](**args)  # no gm.tool_call(id): the ids come by themselves
        _create(client, api)(**_request(api, False))
    assert _tool_ids(fakehub) == EXPECTED


@pytest.mark.parametrize(("api", "stream"), CASES)
async def test_an_async_agent_loop_outside_any_run_does_the_same(
    fakehub: FakeHub, gm: graphmind.Client, fake: FakeOpenAI, api: str, stream: bool
) -> None:
    fake.script([CALLS, "done"])
    client = instrument_openai(AsyncOpenAI(base_url=fake.base_url, api_key="test"), session=gm)
    tools = _tools(gm)
    reply = await _create(client, api)(**_request(api, stream))
    calls = _collect(api, [e async for e in reply]) if stream else _reply_calls(api, reply)
    for name, _id, args in calls:
        tools[name](**args)
    assert _tool_ids(fakehub) == EXPECTED


def test_an_injected_reply_hands_its_call_ids_to_the_tools(
    fakehub: FakeHub, gm: graphmind.Client, fake: FakeOpenAI
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer(
        "inject",
        {"tool_calls": [{"id": "call_x", "name": "search", "arguments": {"q": "from the debugger"}}]},
    )
    client = instrument_openai(OpenAI(base_url=fake.base_url, api_key="test"), session=gm)
    tools = _tools(gm)
    with gm.run("agent"):
        reply = client.chat.completions.create(**_request("chat", False))
        for name, _id, args in _reply_calls("chat", reply):
            tools[name](**args)
    fakehub.wait_for(
        lambda: any(e["kind"] == "tool" for e in fakehub.of_type("node.finished")), what="the tool"
    )
    assert [e["instanceId"] for e in fakehub.of_type("node.started") if e["kind"] == "tool"] == ["call_x"]
    assert fake.request_count == 0
