"""Reload code and retry for a Pydantic AI function tool: the adapter reports the tool's function
(`NodeSpec.function`), core runs its module again and puts the new code into that function, which
the agent's own `Tool` calls. The tool module is a real file the test rewrites while the call is
held at its error gate."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pa_helpers import ScriptedModel, search_then_answer
from pydantic_ai import Agent

import graphmind
from graphmind.testing import Answer, FakeHub
from graphmind_pydantic_ai import instrument_pydantic_ai

BROKEN = '''
def search(q: str) -> str:
    """Search the web."""
    raise RuntimeError("the old code")
'''
FIXED = BROKEN.replace('raise RuntimeError("the old code")', 'return f"new code: results for {q}"')


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Any]]:
    name = f"gm_pydantic_ai_reload_{id(tmp_path)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(BROKEN))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path, importlib.import_module(name)
    sys.modules.pop(name, None)


async def test_reload_and_retry_at_a_tools_error_gate_runs_the_new_code(
    gm: graphmind.Client, fakehub: FakeHub, tools: tuple[Path, Any]
) -> None:
    path, module = tools
    agent: Agent[None, str] = Agent(ScriptedModel([search_then_answer]).model, name="researcher")
    agent.tool_plain(name="search")(module.search)
    instrument_pydantic_ai(agent, session=gm)
    fakehub.set_debug(pause_on_error="on")
    held: list[dict[str, Any]] = []

    def answer(paused: dict[str, Any]) -> Answer:
        held.append(paused)
        if len(held) > 1:  # the reload was refused (the gate held again): let the error through
            return ("continue", None)
        path.write_text(textwrap.dedent(FIXED))  # the fix, saved while the call is held
        return ("retry", None, {"reload": True})

    fakehub.auto_answer(answer)
    assert (await agent.run("find cats")).output == "saw: new code: results for cats"
    assert [(p["nodeId"], p["gate"], p["reloadable"]) for p in held] == [("tool:search", "error", True)]


async def test_a_model_request_says_why_reload_is_not_offered(gm: graphmind.Client, fakehub: FakeHub) -> None:
    agent: Agent[None, str] = Agent(ScriptedModel([lambda _messages: "hello"]).model, name="plain")
    instrument_pydantic_ai(agent, session=gm)
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("continue")
    assert (await agent.run("hi")).output == "hello"
    (paused,) = fakehub.of_type("exec.paused")
    assert paused["reloadable"] is False and paused["notReloadable"].startswith("a model call runs no code")
