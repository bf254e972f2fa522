"""The gates on a Strands agent with two tools, its model Strands' own `OpenAIModel` against the
loopback fake (which counts requests), on core's FakeHub: inject, edit, retry, abort, and what the
nodes record."""

from __future__ import annotations

from typing import Any

import pytest
from strands_helpers import Bodies, ToolDown, agent, tool_messages

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai.testing import FakeOpenAI
from graphmind_strands import GraphmindHooks, instrument_strands


def nodes(hub: FakeHub, event_type: str, node_id: str) -> list[dict[str, Any]]:
    hub.wait_for(lambda: any(e.get("type") == "run.finished" for e in hub.events), what="the run's end")
    return [e for e in hub.of_type(event_type) if e.get("nodeId") == node_id]


def instrumented(how: str, fake: FakeOpenAI, bodies: Bodies, gm: graphmind.Client) -> Any:
    if how == "process":
        instrument_strands(session=gm)
        return agent(fake, bodies)
    return agent(fake, bodies, hooks=[GraphmindHooks(session=gm)])


@pytest.mark.parametrize("how", ["process", "hooks"])
async def test_a_plain_run_records_model_steps_and_tool_nodes_with_the_tool_use_id(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, how: str
) -> None:
    bodies = Bodies()
    fake.script([FakeOpenAI.tool_call("search", {"q": "cats"}, call_id="call_1"), "cats are great"])
    result = await instrumented(how, fake, bodies, gm).invoke_async("find cats")
    assert str(result).strip() == "cats are great"
    assert bodies.searches == ["cats"] and fake.request_count == 2
    steps = nodes(fakehub, "node.finished", "llm:step")
    assert len(steps) == 2
    assert steps[0]["output"]["tool_calls"][0]["name"] == "search"
    assert steps[1]["output"]["content"] == "cats are great"
    started = nodes(fakehub, "node.started", "llm:step")
    assert started[0]["attrs"]["model"] == "gpt-4o-mini"
    assert started[1]["input"]["messages"][-1]["role"] == "tool"
    tool = nodes(fakehub, "node.finished", "tool:search")
    assert [t["instanceId"] for t in tool] == ["call_1"] and tool[0]["output"] == "results for cats"
    runs = fakehub.of_type("run.started")
    assert len(runs) == 1 and runs[0]["name"] == "researcher"


async def test_debug_runs(gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI) -> None:
    bodies = Bodies()
    fake.script([FakeOpenAI.tool_call("search", {"q": "cats"}, call_id="call_1"), "cats are great"])
    instrument_strands(session=gm)
    await agent(fake, bodies).invoke_async("find cats")
    fakehub.wait_for(lambda: any(e.get("type") == "run.finished" for e in fakehub.events), what="end")
    for e in fakehub.events:
        print(e.get("type"), e.get("nodeId"), e.get("runId"), e.get("name"))
    assert 0
