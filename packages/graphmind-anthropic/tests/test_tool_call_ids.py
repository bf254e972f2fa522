"""Tool node identity = the `tool_use` id without `gm.tool_call` (issue 16 item 6): a small agent loop
against the fake provider, plain and streamed, sync and async; each gated tool node's instanceId is
the id of the `tool_use` block the model step asked with."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic import Anthropic, AsyncAnthropic

import graphmind
from graphmind.testing import FakeHub
from graphmind_anthropic import instrument_anthropic
from graphmind_anthropic.testing import FakeAnthropic

MODEL = "claude-test"
TOOLS = [{"name": n, "input_schema": {"type": "object"}} for n in ("search", "read")]
CALLS = {
    "content": None,
    "tool_calls": [
        {"id": "toolu_s1", "name": "search", "arguments": {"q": "cairo"}},
        {"id": "toolu_r1", "name": "read", "arguments": {"q": "page"}},
        {"id": "toolu_s2", "name": "search", "arguments": {"q": "giza"}},
    ],
}
EXPECTED = [("search", "toolu_s1"), ("read", "toolu_r1"), ("search", "toolu_s2")]
REQUEST: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "trip"}],
    "tools": TOOLS,
}


def _tools(gm: graphmind.Client) -> dict[str, Any]:
    return {
        "search": gm.wrap(lambda q: f"found {q}", name="search"),
        "read": gm.wrap(lambda q: q, name="read"),
    }


def _uses(message: Any) -> list[tuple[str, str, dict[str, Any]]]:
    return [(b.name, b.id, b.input) for b in message.content if b.type == "tool_use"]


def _tool_ids(hub: FakeHub) -> list[tuple[str, str]]:
    hub.wait_for(
        lambda: len([e for e in hub.of_type("node.finished") if e["kind"] == "tool"]) >= 3,
        what="3 tool nodes",
    )
    return [(e["name"], e["instanceId"]) for e in hub.of_type("node.started") if e["kind"] == "tool"]


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_a_sync_agent_loop_names_each_tool_node_after_its_tool_use_id(
    fakehub: FakeHub, gm: graphmind.Client, fake: FakeAnthropic, stream: bool
) -> None:
    fake.script([CALLS, "done"])
    client = instrument_anthropic(Anthropic(base_url=fake.base_url, api_key="test"), session=gm)
    tools = _tools(gm)
    with gm.run("agent"):
        if stream:
            with client.messages.stream(**REQUEST) as s:
                message = s.get_final_message()
        else:
            message = client.messages.create(**REQUEST)
        assert [u[1] for u in _uses(message)] == ["toolu_s1", "toolu_r1", "toolu_s2"]
        for name, _id, args in _uses(message):
            tools[name](**args)  # no gm.tool_call(id)
        client.messages.create(**REQUEST)
    assert _tool_ids(fakehub) == EXPECTED


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
async def test_an_async_agent_loop_outside_any_run_does_the_same(
    fakehub: FakeHub, gm: graphmind.Client, fake: FakeAnthropic, stream: bool
) -> None:
    fake.script([CALLS])
    client = instrument_anthropic(AsyncAnthropic(base_url=fake.base_url, api_key="test"), session=gm)
    tools = _tools(gm)
    if stream:
        async with client.messages.stream(**REQUEST) as s:
            message = await s.get_final_message()
    else:
        message = await client.messages.create(**REQUEST)
    for name, _id, args in _uses(message):
        tools[name](**args)
    assert _tool_ids(fakehub) == EXPECTED
