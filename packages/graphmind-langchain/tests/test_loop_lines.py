"""The loop streak with LangChain: a root LangChain call is a line of its own; a run's calls share one.

langchain-core's own suite, attached, used to hold parametrized tests' identical top-level
`tool.invoke` calls (one xdist worker thread, three tests in a row) as a loop (issue 18).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool

import graphmind
from graphmind.testing import FakeHub
from graphmind_langchain import GraphmindCallbackHandler


def _search() -> Any:
    @tool
    def search(query: str) -> str:
        """Search."""
        return query

    return search


def _loop_holds(hub: FakeHub) -> list[dict[str, Any]]:
    return [e for e in hub.of_type("exec.paused") if e.get("reason") == "loop"]


@pytest.mark.parametrize("path", ["sync", "async"])
async def test_identical_root_tool_calls_on_one_thread_are_not_a_loop(
    hub: FakeHub, client: graphmind.Client, path: str
) -> None:
    search = _search()
    hub.auto_answer("continue")  # a wrong hold shows as an exec.paused event, never hangs
    config: Any = {"callbacks": [GraphmindCallbackHandler(client)]}
    for _ in range(3):
        result = (
            search.invoke({"query": "q"}, config)
            if path == "sync"
            else await search.ainvoke({"query": "q"}, config)
        )
        assert result == "q"
    hub.wait_for(lambda: len([e for e in hub.of_type("node.finished") if e["nodeId"] == "tool:search"]) == 3)
    assert _loop_holds(hub) == []


def test_identical_tool_calls_within_one_root_chain_are_a_loop(
    hub: FakeHub, client: graphmind.Client
) -> None:
    search = _search()
    hub.auto_answer("continue")
    chain = RunnableLambda(lambda q, config: [search.invoke({"query": q}, config) for _ in range(3)])
    assert chain.invoke("q", {"callbacks": [GraphmindCallbackHandler(client)]}) == ["q", "q", "q"]
    holds = _loop_holds(hub)
    assert len(holds) == 1 and holds[0]["nodeId"] == "tool:search" and holds[0]["loop"]["repeats"] == 3


def test_identical_root_tool_calls_inside_a_graphmind_run_are_a_loop(
    hub: FakeHub, client: graphmind.Client
) -> None:
    search = _search()
    hub.auto_answer("continue")
    with client.run("agent"):
        for _ in range(3):
            assert search.invoke({"query": "q"}, {"callbacks": [GraphmindCallbackHandler(client)]}) == "q"
    assert len(_loop_holds(hub)) == 1
