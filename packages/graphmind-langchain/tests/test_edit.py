"""Edited inputs at a LangChain tool's gates (docs/protocol.md, "Editing a held call"), with and
without the callback handler, against graphmind.testing.FakeHub. The chat model's edit is the gate
matrix's (test_gate_matrix.py, `before_edit`, `error_retry_edit`, on FakeHub and the real hub)."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool

import graphmind
from graphmind.testing import FakeHub
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
