"""Timeouts over a hold (docs/timeouts.md): a tool's `timeout` is applied by its toolset's
`call_tool` (pydantic_ai/toolsets/function.py:858, `anyio.fail_after`), inside the handler that
`wrap_tool_execute` wraps (pydantic_ai/tool_manager.py:768): the before and after gates are held
outside it, so a hold longer than the timeout does not turn the tool call into a retry prompt."""

from __future__ import annotations

import threading
import time

import pytest
from pa_helpers import ScriptedModel, Search, search_then_answer
from pydantic_ai import Agent

import graphmind
from graphmind.testing import FakeHub
from graphmind_pydantic_ai import instrument_pydantic_ai

TIMEOUT = 0.3  # seconds: the tool's own timeout
HOLD = 1.0  # the person takes longer than that at the gate


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
    gm: graphmind.Client, fakehub: FakeHub, gate: str
) -> None:
    search, model = Search(), ScriptedModel([search_then_answer])
    agent: Agent[None, str] = Agent(model.model, name="researcher")

    @agent.tool_plain(name="search", timeout=TIMEOUT)
    async def search_tool(q: str) -> str:
        """Search the web."""
        return search.run(q)

    instrument_pydantic_ai(agent, session=gm)
    fakehub.set_debug(breakpoints=[("tool:search", gate)])
    held_for: list[float] = []
    answerer = _answer_after_a_long_hold(fakehub, held_for)
    result = await agent.run("find cats")
    answerer.join(10)
    assert held_for and held_for[0] >= HOLD > TIMEOUT
    assert result.output == "saw: results for cats", "the tool's result, not a timeout retry prompt"
    assert search.calls == 1
