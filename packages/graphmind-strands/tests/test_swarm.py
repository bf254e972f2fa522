"""A Strands swarm of two agents (their models Strands' `OpenAIModel` against the loopback fake):
two agents reported, a gated handoff node between them, each agent's model steps its own."""

from __future__ import annotations

from typing import Any

import pytest
from strands import Agent
from strands.multiagent import Swarm
from strands_helpers import model

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai.testing import FakeOpenAI
from graphmind_strands import GraphmindHooks, instrument_strands


def swarm(fake: FakeOpenAI, **kwargs: Any) -> Swarm:
    triage = Agent(model=model(fake), name="triage", system_prompt="You triage.", callback_handler=None)
    billing = Agent(model=model(fake), name="billing", system_prompt="You bill.", callback_handler=None)
    return Swarm([triage, billing], entry_point=triage, **kwargs)


def script(fake: FakeOpenAI) -> None:
    fake.script(
        [
            FakeOpenAI.tool_call(
                "handoff_to_agent",
                {"agent_name": "billing", "message": "a refund for order 7"},
                call_id="call_h",
            ),
            "triage: handed over",  # the triage agent's turn ends after its handoff tool's result
            "billing: refunded",
        ]
    )


def finished(hub: FakeHub) -> list[dict[str, Any]]:
    hub.wait_for(lambda: any(e.get("type") == "run.finished" for e in hub.events), what="the run's end")
    return hub.events


@pytest.mark.parametrize("how", ["process", "hooks"])
async def test_a_two_agent_swarm_reports_two_agents_a_handoff_and_distinct_model_steps(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, how: str
) -> None:
    script(fake)
    if how == "process":
        instrument_strands(session=gm)
        team = swarm(fake)
    else:
        team = swarm(fake, hooks=[GraphmindHooks(session=gm)])
        for node in team.nodes.values():
            node.executor.hooks.add_hook(GraphmindHooks(session=gm))
    result = await team.invoke_async("I want a refund")
    assert "refunded" in str(result.results["billing"].result)
    events = finished(fakehub)
    runs = [e for e in events if e["type"] == "run.started"]
    assert len(runs) == 1, "the swarm is one run"
    started = [e for e in events if e["type"] == "node.started"]
    steps = [e for e in started if e["nodeId"].startswith("llm:step")]
    assert [s["agent"] for s in steps] == ["triage", "triage", "billing"]
    assert [s["nodeId"] for s in steps] == ["llm:step", "llm:step", "llm:step@billing"]
    assert len({s["instanceId"] for s in steps}) == 3
    handoffs = [e for e in started if e["nodeId"].startswith("handoff:")]
    assert [h["nodeId"] for h in handoffs] == ["handoff:triage->billing"]
    assert handoffs[0]["input"]["message"] == "a refund for order 7"


async def test_an_edited_handoff_message_is_what_the_target_agent_gets(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    script(fake)
    instrument_strands(session=gm)
    fakehub.set_debug(breakpoints=[("handoff:*", "before")])
    fakehub.auto_answer(
        lambda paused: ("continue", None, {"input": {**paused["input"], "message": "order 8"}})
    )
    await swarm(fake).invoke_async("I want a refund")
    sent = str(fake.requests[2].body["messages"])
    assert "order 8" in sent and "order 7" not in sent


async def test_an_injected_handoff_answer_means_the_target_never_runs(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    script(fake)
    instrument_strands(session=gm)
    fakehub.set_debug(breakpoints=[("handoff:*", "before")])
    fakehub.auto_answer("inject", "answered by the debugger")
    await swarm(fake).invoke_async("I want a refund")
    assert fake.request_count == 2, "billing's model was never called (triage's two requests only)"
