"""The loop streak belongs to one line of execution: the run, or outside any run the thread / task.

Identical top-level calls made one after another by unrelated threads or tasks (three requests
of a web server, three tests of a suite) are not a loop; the same calls in a row on one thread or
task, or anywhere within one run, are.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import graphmind
from graphmind.testing import FakeHub


@pytest.fixture
def client(hub: FakeHub) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="lines", url=hub.url)
    assert c.ready(5)
    hub.auto_answer("inject", "held")  # a hold is answered at once: a wrong one shows, never hangs
    yield c
    c.dispose()


def _loop_holds(hub: FakeHub) -> list[dict[str, Any]]:
    return [e for e in hub.of_type("exec.paused") if e.get("reason") == "loop"]


def _tools(client: graphmind.Client) -> tuple[Any, Any]:
    @client.tool
    def search(q: str) -> str:
        return q

    @client.tool
    async def asearch(q: str) -> str:
        return q

    return search, asearch


def _in_thread(fn: Any) -> Any:
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(fn()))
    worker.start()
    worker.join(10)
    assert not worker.is_alive()
    return out[0]


def test_three_identical_top_level_calls_from_three_threads_are_not_held(
    hub: FakeHub, client: graphmind.Client
) -> None:
    search, _ = _tools(client)
    results = [_in_thread(lambda: search(q="x")) for _ in range(3)]
    assert results == ["x", "x", "x"]
    hub.wait_for(lambda: len([e for e in hub.of_type("node.finished") if e["nodeId"] == "tool:search"]) == 3)
    assert _loop_holds(hub) == []


def test_three_in_a_row_on_one_thread_outside_any_run_are_held(
    hub: FakeHub, client: graphmind.Client
) -> None:
    search, _ = _tools(client)
    results = _in_thread(lambda: [search(q="x") for _ in range(3)])
    assert results == ["x", "x", "held"]
    assert len(_loop_holds(hub)) == 1


async def test_three_identical_top_level_calls_from_three_tasks_are_not_held(
    hub: FakeHub, client: graphmind.Client
) -> None:
    _, asearch = _tools(client)
    results = [await asyncio.create_task(asearch(q="x")) for _ in range(3)]
    assert results == ["x", "x", "x"]
    hub.wait_for(lambda: len([e for e in hub.of_type("node.finished") if e["nodeId"] == "tool:asearch"]) == 3)
    assert _loop_holds(hub) == []


async def test_three_in_a_row_in_one_task_outside_any_run_are_held(
    hub: FakeHub, client: graphmind.Client
) -> None:
    _, asearch = _tools(client)
    assert [await asearch(q="x") for _ in range(3)] == ["x", "x", "held"]
    assert len(_loop_holds(hub)) == 1


def test_within_a_run_the_run_is_the_line_whatever_the_thread(hub: FakeHub, client: graphmind.Client) -> None:
    search, _ = _tools(client)
    with client.run("agent"):
        context = contextvars.copy_context()  # what asyncio.to_thread hands a worker: the run goes along
        results = [_in_thread(lambda: context.copy().run(search, q="x")) for _ in range(3)]
    assert results == ["x", "x", "held"]
    assert len(_loop_holds(hub)) == 1


def test_a_warning_outside_any_run_is_per_thread(caplog: pytest.LogCaptureFixture) -> None:
    client = graphmind.Client(app="lines", url="ws://127.0.0.1:9")  # detached: the loop warns
    try:
        search, _ = _tools(client)
        for _ in range(3):
            _in_thread(lambda: search(q="x"))
        assert "possible loop" not in caplog.text
        _in_thread(lambda: [search(q="x") for _ in range(3)])
        assert caplog.text.count("possible loop") == 1
    finally:
        client.dispose()
