"""Reload code and retry for an ADK `FunctionTool`: the adapter reports its `func`
(`NodeSpec.function`), core runs the module again and puts the new code into that function, which
the tool calls. The tool module is a real file the test rewrites while the call is held at its
error gate."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from adk_helpers import ScriptedLlm, agent, collect, runner, tool_results, tool_script

import graphmind
from graphmind.testing import Answer, FakeHub
from graphmind_google_adk import instrument_runner

BROKEN = '''
def add(a: int, b: int) -> dict:
    """Adds two numbers."""
    raise RuntimeError("the old code")
'''
FIXED = BROKEN.replace('raise RuntimeError("the old code")', 'return {"sum": a + b, "code": "new"}')


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Any]]:
    name = f"gm_adk_reload_{id(tmp_path)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(BROKEN))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path, importlib.import_module(name)
    sys.modules.pop(name, None)


async def test_reload_and_retry_at_a_function_tools_error_gate_runs_the_new_code(
    tools: tuple[Path, Any],
) -> None:
    path, module = tools
    with FakeHub(pause_on_error="on") as hub:
        client = graphmind.Client(app="adk-reload", url=hub.url, retry_interval=0.2)
        try:
            assert client.ready(5)
            model = ScriptedLlm(script=tool_script("add", {"a": 2, "b": 3}))
            r = instrument_runner(runner(agent(model, [module.add])), session=client)
            held: list[dict[str, Any]] = []

            def answer(paused: dict[str, Any]) -> Answer:
                held.append(paused)
                if len(held) > 1:  # the reload was refused (the gate held again): let the error through
                    return ("continue", None)
                path.write_text(textwrap.dedent(FIXED))  # the fix, saved while the call is held
                return ("retry", None, {"reload": True})

            hub.auto_answer(answer)
            events = await collect(r)
            assert [(p["nodeId"], p["gate"], p["reloadable"]) for p in held] == [("tool:add", "error", True)]
            assert tool_results(events) == [{"sum": 5, "code": "new"}]
        finally:
            client.dispose()
