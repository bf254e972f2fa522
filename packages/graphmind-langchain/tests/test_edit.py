"""Edited inputs at a LangChain tool's gates (docs/protocol.md, "Editing a held call"), with and
without the callback handler, against graphmind.testing.FakeHub. The chat model's edit is the gate
matrix's (test_gate_matrix.py, `before_edit`, `error_retry_edit`, on FakeHub and the real hub)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

import graphmind
from graphmind.testing import Answer, FakeHub
from graphmind_langchain import GraphmindCallbackHandler, gate_tools


def _search(calls: list[tuple[str, int]]) -> Any:
    @tool
    def search(query: str, limit: int = 3) -> str:
        """Search the web."""
        calls.append((query, limit))
        return f"{limit} results for {query}"

    return search


def test_a_tool_held_before_runs_with_the_edited_arguments(hub: FakeHub, client: graphmind.Client) -> None:
    calls: list[tuple[str, int]] = []
    search = gate_tools(_search(calls), session=client)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer(lambda frame: ("continue", None, {"input": {"query": "dogs", "limit": 9}}))
    assert search.invoke({"query": "cats"}) == "9 results for dogs"
    assert calls == [("dogs", 9)]
    paused = hub.of_type("exec.paused")[0]
    assert paused["editable"] is True and paused["input"] == {"query": "cats", "limit": 3}
    finished = hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "tool:search")
    assert finished["edited"] is True and finished["originalInput"] == {"query": "cats", "limit": 3}


def test_the_same_under_the_callback_handler(hub: FakeHub, client: graphmind.Client) -> None:
    calls: list[tuple[str, int]] = []
    search = gate_tools(_search(calls), session=client)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer(lambda frame: ("continue", None, {"input": {"query": "dogs"}}))
    handler = GraphmindCallbackHandler(session=client)
    assert search.invoke({"query": "cats"}, config={"callbacks": [handler]}) == "3 results for dogs"
    assert calls == [("dogs", 3)]


def test_an_argument_the_tool_does_not_take_re_holds_with_the_reason(
    hub: FakeHub, client: graphmind.Client
) -> None:
    calls: list[tuple[str, int]] = []
    search = gate_tools(_search(calls), session=client)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    answers = [("continue", None, {"input": {"query": "x", "colour": "red"}}), ("continue", None)]
    hub.auto_answer(lambda frame: answers.pop(0))
    assert search.invoke({"query": "cats"}) == "3 results for cats"
    again = hub.of_type("exec.paused")[1]
    assert "unknown argument 'colour' (search takes query, limit)" in again["refused"]
    assert calls == [("cats", 3)]


BROKEN = '''
from langchain_core.tools import tool

@tool
def search(query: str) -> str:
    """Search the web."""
    raise RuntimeError("the old code")
'''


def test_reload_and_retry_at_a_tools_error_gate_runs_the_new_code(
    hub: FakeHub, client: graphmind.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The adapter reports the `@tool` function (`NodeSpec.function`); core puts the new code into it."""
    name = f"gm_langchain_reload_{id(tmp_path)}"
    path = tmp_path / f"{name}.py"
    path.write_text(BROKEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        search = gate_tools(importlib.import_module(name).search, session=client)
        hub.set_debug(pause_on_error="on")
        held: list[dict[str, Any]] = []

        def answer(paused: dict[str, Any]) -> Answer:
            held.append(paused)
            if len(held) > 1:  # the reload was refused (the gate held again): let the error through
                return ("continue", None)
            path.write_text(
                BROKEN.replace('raise RuntimeError("the old code")', 'return f"new code: {query}"')
            )
            return ("retry", None, {"reload": True})

        hub.auto_answer(answer)
        assert search.invoke({"query": "cats"}) == "new code: cats"
        assert [(p["gate"], p["reloadable"]) for p in held] == [("error", True)]
    finally:
        sys.modules.pop(name, None)
