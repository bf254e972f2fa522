"""Reload code and retry for an Agents SDK function tool: the adapter reports the function
`@function_tool` was given (`NodeSpec.function`), core runs its module again and puts the new code
into that function, which the SDK's own `FunctionTool` calls. The tool module is a real file the
test rewrites while the call is held at its error gate."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents_helpers import PROMPT, REPLY, model_for, tool_outputs, tool_then_text

import graphmind
from graphmind.testing import Answer, FakeHub
from graphmind_openai.testing import FakeOpenAI
from graphmind_openai_agents import instrument_openai_agents

BROKEN = '''
from agents import function_tool

@function_tool
def search_flights(to: str) -> str:
    """Flights to a city."""
    raise RuntimeError("the old code")
'''
FIXED = BROKEN.replace('raise RuntimeError("the old code")', 'return f"new code: 3 flights to {to}"')


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Any]]:
    name = f"gm_agents_reload_{id(tmp_path)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(BROKEN))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path, importlib.import_module(name)
    sys.modules.pop(name, None)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default_reply=tool_then_text) as provider:
        yield provider


async def test_reload_and_retry_at_a_function_tools_error_gate_runs_the_new_code(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, tools: tuple[Path, Any]
) -> None:
    path, module = tools
    assert instrument_openai_agents(session=gm)
    fakehub.set_debug(pause_on_error="on")
    held: list[dict[str, Any]] = []

    def answer(paused: dict[str, Any]) -> Answer:
        held.append(paused)
        if len(held) > 1:  # the reload was refused (the gate held again): let the error through
            return ("continue", None)
        path.write_text(textwrap.dedent(FIXED))  # the fix, saved while the call is held
        return ("retry", None, {"reload": True})

    fakehub.auto_answer(answer)
    agent = Agent(name="planner", tools=[module.search_flights], model=model_for(fake))
    result = await Runner.run(agent, PROMPT)
    assert result.final_output == REPLY
    assert [(p["nodeId"], p["gate"], p["reloadable"]) for p in held] == [
        ("tool:search_flights", "error", True)
    ]
    assert tool_outputs(fake) == ["new code: 3 flights to CAI"]  # what the model was sent


async def test_a_tool_whose_function_cannot_reload_says_why_on_the_gate(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    @function_tool
    def search_flights(to: str) -> str:
        """Flights to a city."""
        return f"3 flights to {to}"

    assert instrument_openai_agents(session=gm)
    fakehub.set_debug(breakpoints=[("tool:search_flights", "before")])
    fakehub.auto_answer("continue")
    agent = Agent(name="planner", tools=[search_flights], model=model_for(fake))
    assert (await Runner.run(agent, PROMPT)).final_output == REPLY
    (paused,) = fakehub.of_type("exec.paused")
    assert paused["reloadable"] is False
    assert "search_flights is defined inside a function (a closure)" in paused["notReloadable"]
