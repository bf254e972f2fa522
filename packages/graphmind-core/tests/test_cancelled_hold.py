"""A call held at a gate whose asyncio task is cancelled: the gate is closed (the hub stops showing it)."""

from __future__ import annotations

import asyncio

import pytest

import graphmind
from graphmind.adapter import NodeSpec, engine_for
from graphmind.testing import FakeHub


async def test_a_cancelled_task_closes_its_held_gate_and_fails_its_node() -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url)
        try:
            assert client.ready(5)
            hub.set_debug(breakpoints=[("tool:slow", "before")])
            engine = engine_for(client)

            async def body() -> str:
                return "ran"

            async def call() -> str:
                ex = await engine.astart_node(NodeSpec("slow"))
                try:
                    return await ex.run_async(body)
                except asyncio.CancelledError as exc:
                    ex.fail(exc)
                    raise

            task = asyncio.ensure_future(call())
            await asyncio.to_thread(hub.next_paused)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            resumed = await asyncio.to_thread(hub.wait_event, lambda e: e["type"] == "exec.resumed")
            assert (resumed["action"], resumed["by"]) == ("continue", "cancelled")
            assert client.stats()["held"] == 0
            error = await asyncio.to_thread(hub.wait_event, lambda e: e["type"] == "node.error")
            assert error["error"]["name"] == "CancelledError"
        finally:
            client.dispose()
