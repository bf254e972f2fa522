"""Timeouts over a hold (docs/timeouts.md): a function tool's `timeout` (`FunctionTool.timeout_seconds`) starts after its
before gate and ends before its after gate, because the hook replaces the function that applies it
(`_invoke_function_tool_with_metadata`, agents/tool.py:2278, `asyncio.wait_for` at :2297): a hold
longer than the timeout does not turn the tool's result into the SDK's timeout message."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents_helpers import PROMPT, REPLY, model_for, tool_outputs, tool_then_text

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai.testing import FakeOpenAI
from graphmind_openai_agents import instrument_openai_agents

TIMEOUT = 0.3  # seconds: the tool's own timeout
HOLD = 1.0  # the person takes longer than that at the gate


@pytest.fixture
def fake() -> Any:
    with FakeOpenAI(chunks=3, default_reply=tool_then_text) as provider:
        yield provider


def _answer_after_a_long_hold(hub: FakeHub, held_for: list[float]) -> threading.Thread:
    def answer() -> None:
        paused = hub.next_paused(timeout=10)
        started = time.monotonic()
        time.sleep(HOLD)  # the hold itself is what is tested: it must outlast the tool's timeout
        held_for.append(time.monotonic() - started)
        hub.resolve(paused["gateId"], "continue")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("gate", ["before", "after"])
async def test_a_hold_longer_than_the_tools_timeout_does_not_time_the_tool_out(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, gate: str
) -> None:
    assert instrument_openai_agents(session=gm)
    calls: list[str] = []

    @function_tool(name_override="search_flights", timeout=TIMEOUT)
    async def search_flights(to: str) -> str:
        """Flights to a city."""
        calls.append(to)
        return f"3 flights to {to}"

    agent = Agent(name="planner", instructions="Plan.", tools=[search_flights], model=model_for(fake))
    fakehub.set_debug(breakpoints=[("tool:search_flights", gate)])
    held_for: list[float] = []
    answerer = _answer_after_a_long_hold(fakehub, held_for)
    result = await Runner.run(agent, PROMPT)
    answerer.join(10)
    assert held_for and held_for[0] >= HOLD > TIMEOUT
    assert result.final_output == REPLY and calls == ["CAI"]
    assert tool_outputs(fake) == ["3 flights to CAI"], "the tool's result, not the SDK's timeout message"
