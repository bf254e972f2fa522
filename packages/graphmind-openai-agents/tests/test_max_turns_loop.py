"""The OpenAI Agents SDK's own `tests/test_max_turns.py` has a model that asks for the same tool with
the same arguments on every turn until `max_turns` runs out. That is exactly what the loop hold is
for (the environment page, "Loop hold": model → tool → model → tool → model → tool is three in a
row): attached, the third identical call is held at its before gate, reason `loop`, with no
breakpoint; with `GRAPHMIND_ON_LOOP=warn` (or `loop_guard={"mode": "warn"}`) nothing is held, one
warning names the tool, and the run ends with `MaxTurnsExceeded` as it does bare."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from agents import Agent, MaxTurnsExceeded, Runner
from agents_helpers import PROMPT, Tool, model_for

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai.testing import FakeOpenAI
from graphmind_openai_agents import instrument_openai_agents


def _same_call_every_turn(_body: dict[str, Any]) -> Any:
    return FakeOpenAI.tool_call("search_flights", {"to": "CAI"})


@pytest.fixture
def fake() -> Any:
    with FakeOpenAI(chunks=3, default_reply=_same_call_every_turn) as provider:
        yield provider


def _agent(fake: FakeOpenAI, tool: Tool) -> Agent[Any]:
    return Agent(name="planner", instructions="Plan.", tools=[tool.tool], model=model_for(fake))


async def test_attached_the_third_identical_tool_call_before_max_turns_is_held_as_a_loop(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    assert instrument_openai_agents(session=gm)
    fakehub.auto_answer("continue")  # the person at the debugger lets it go on
    tool = Tool()
    with pytest.raises(MaxTurnsExceeded):
        await Runner.run(_agent(fake, tool), PROMPT, max_turns=3)
    assert len(tool.calls) == 3
    (held,) = fakehub.of_type("exec.paused")
    assert held["nodeId"] == "tool:search_flights" and held["reason"] == "loop"
    assert held["loop"]["repeats"] == 3


async def test_with_on_loop_warn_nothing_is_held_and_max_turns_ends_the_run_as_bare(
    fakehub: FakeHub, fake: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    client = graphmind.Client(
        app="agents", url=fakehub.url, retry_interval=0.2, environ={"GRAPHMIND_ON_LOOP": "warn"}
    )
    try:
        assert client.ready(5)
        assert instrument_openai_agents(session=client)
        tool = Tool()
        with pytest.raises(MaxTurnsExceeded):
            await Runner.run(_agent(fake, tool), PROMPT, max_turns=3)
        assert len(tool.calls) == 3 and fakehub.of_type("exec.paused") == []
        warned = [r.getMessage() for r in caplog.records if "possible loop" in r.getMessage()]
        assert len(warned) == 1 and "search_flights (tool:search_flights)" in warned[0]
        assert "GRAPHMIND_ON_LOOP=warn, so it is not being held" in warned[0]
    finally:
        client.dispose()
