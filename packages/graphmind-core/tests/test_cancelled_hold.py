"""A call whose caller gives up (its asyncio task cancelled) while held at a gate, or while its body
runs: the gate is closed (the hub stops showing it) and the node ends, `node.error` marked
`cancelled: true`, never left running (tests/test_hub_cancelled_hold.py: the same on the real hub)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

import graphmind
from graphmind.adapter import NodeSpec, engine_for
from graphmind.testing import FakeHub


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as h:
        yield h


@pytest.fixture
def client(hub: FakeHub) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="t", url=hub.url)
    assert c.ready(5)
    yield c
    c.dispose()


async def test_a_cancelled_task_closes_its_held_gate_and_fails_its_node(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(breakpoints=[("tool:slow", "before")])
    engine = engine_for(client)
    ran: list[bool] = []

    async def body() -> str:
        ran.append(True)
        return "ran"

    task = asyncio.ensure_future(engine.aexecute(NodeSpec("slow"), body))
    await asyncio.to_thread(hub.next_paused)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    resumed = await asyncio.to_thread(hub.wait_event, lambda e: e["type"] == "exec.resumed")
    assert (resumed["action"], resumed["by"]) == ("continue", "cancelled")
    assert client.stats()["held"] == 0
    error = await asyncio.to_thread(hub.wait_event, lambda e: e["type"] == "node.error")
    assert error["error"]["name"] == "CancelledError"
    assert error["cancelled"] is True
    assert ran == []


async def test_a_task_cancelled_in_its_body_fails_its_node_as_cancelled(
    hub: FakeHub, client: graphmind.Client
) -> None:
    engine = engine_for(client)
    started = asyncio.Event()

    async def body() -> str:
        started.set()
        await asyncio.Event().wait()  # never set: only the cancellation ends it
        return "never"

    task = asyncio.ensure_future(engine.aexecute(NodeSpec("stuck"), body))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    error = await asyncio.to_thread(hub.wait_event, lambda e: e["type"] == "node.error")
    assert (error["nodeId"], error["cancelled"]) == ("tool:stuck", True)


async def test_an_error_is_not_marked_cancelled(hub: FakeHub, client: graphmind.Client) -> None:
    engine = engine_for(client)

    async def body() -> str:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        await engine.aexecute(NodeSpec("fails"), body)
    error = await asyncio.to_thread(hub.wait_event, lambda e: e["type"] == "node.error")
    assert error["error"]["name"] == "ValueError"
    assert "cancelled" not in error
