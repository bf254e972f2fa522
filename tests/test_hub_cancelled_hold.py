"""A held call whose caller gives up ends its gate and its node, against the real hub.

The caller giving up is an asyncio task cancelled while its call waits at a gate (the app's own
`asyncio.timeout`, a test's timeout that cancels the task, a framework cancelling a run), or a
thread interrupted there by an exception a signal handler raises (Ctrl-C, pytest-timeout's signal
method). Within a second the hub no longer lists the gate (`GET /api/gates`) and the node has
ended with a `node.error` marked `cancelled: true` (the viewer says "cancelled by the app").
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import graphmind
from graphmind_server.testing import HubProcess, wait_for

GONE_WITHIN_S = 1.0


@pytest.fixture
def client(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="cancel", url=hub.ingest_url)
    assert c.ready(5)
    yield c
    c.dispose()


def _gone_within(hub: HubProcess, gate_id: str, since: float) -> float:
    """Seconds from `since` until the hub no longer lists `gate_id` (AssertionError past 1 s)."""
    wait_for(
        lambda: all(g["gateId"] != gate_id for g in hub.api("GET", "/api/gates")[1]["gates"]),
        GONE_WITHIN_S,
        f"gate {gate_id} gone from /api/gates",
    )
    return time.monotonic() - since


def _ended_cancelled(hub: HubProcess, run_id: str, node_id: str, error: str) -> None:
    """The node's execution ended `node.error` (cancelled: true), after an `exec.resumed` by cancelled."""

    def ended() -> list[dict[str, Any]] | None:
        events = hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]
        mine = [e for e in events if e.get("nodeId") == node_id]
        return mine if any(e["type"] == "node.error" for e in mine) else None

    events = wait_for(ended, 10, f"{node_id} ended")
    resumed = [e for e in events if e["type"] == "exec.resumed"]
    assert [(e["action"], e["by"]) for e in resumed] == [("continue", "cancelled")]
    failed = next(e for e in events if e["type"] == "node.error")
    assert failed["cancelled"] is True
    assert failed["error"]["name"] == error
    node = next(n for n in hub.api("GET", f"/api/runs/{run_id}")[1]["nodes"] if n["nodeId"] == node_id)
    assert node["status"] == "error"  # not left `running` forever


def test_a_task_cancelled_at_a_breakpoint_ends_its_gate_and_node_within_a_second(
    hub: HubProcess, client: graphmind.Client
) -> None:
    assert (
        hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:lookup", "gate": "before"}]})[0] == 200
    )
    ran: list[str] = []

    async def lookup(city: str) -> str:
        ran.append(city)
        return "sunny"

    gated = client.wrap(lookup, name="lookup")
    run_ids: list[str] = []

    async def agent() -> str:
        with client.run("trip") as run:
            run_ids.append(run.run_id)
            return await gated(city="Lisbon")

    async def main() -> float:
        task = asyncio.ensure_future(agent())
        gate = (await asyncio.to_thread(hub.held_gates))[0]
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await asyncio.to_thread(_gone_within, hub, gate["gateId"], cancelled_at)

    asyncio.run(main())
    assert ran == []
    assert client.stats()["held"] == 0
    _ended_cancelled(hub, run_ids[0], "tool:lookup", "CancelledError")


def test_a_task_cancelled_at_a_loop_hold_ends_it(hub: HubProcess, client: graphmind.Client) -> None:
    """The third identical call in a row is held by the loop guard (a framework's test repeating a
    call); the task is cancelled there, as a test's timeout or the app's `asyncio.timeout` cancels
    it: the hold ends, nothing is left waiting on the hub."""
    calls: list[int] = []

    async def poll(n: int) -> int:
        calls.append(n)
        return n

    gated = client.wrap(poll, name="poll")
    run_ids: list[str] = []

    async def agent() -> None:
        with client.run("polling") as run:
            run_ids.append(run.run_id)
            for _ in range(3):
                await gated(n=1)

    async def main() -> float:
        task = asyncio.ensure_future(agent())
        gate = (await asyncio.to_thread(hub.held_gates))[0]
        assert gate["reason"] == "loop"
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await asyncio.to_thread(_gone_within, hub, gate["gateId"], cancelled_at)

    asyncio.run(main())
    assert calls == [1, 1]
    _ended_cancelled(hub, run_ids[0], "tool:poll", "CancelledError")


class Interrupted(BaseException):
    """What a signal handler raises into the held thread (pytest-timeout raises its `Failed`, also
    a BaseException that is not an Exception)."""


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")
def test_a_thread_interrupted_at_a_gate_ends_its_gate_and_node(
    hub: HubProcess, client: graphmind.Client
) -> None:
    assert threading.current_thread() is threading.main_thread()  # signal handlers run here only
    assert (
        hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:charge", "gate": "before"}]})[0] == 200
    )
    gated = client.wrap(lambda amount: f"charged {amount}", name="charge")
    seen: dict[str, Any] = {}
    main_thread = threading.get_ident()

    def interrupt_once_held() -> None:
        seen["gate"] = hub.held_gates()[0]
        seen["at"] = time.monotonic()
        signal.pthread_kill(main_thread, signal.SIGUSR1)

    def handler(signum: int, frame: Any) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGUSR1, handler)
    interrupter = threading.Thread(target=interrupt_once_held)
    try:
        with client.run("checkout") as run:
            interrupter.start()
            with pytest.raises(Interrupted):
                gated(amount=42)
    finally:
        interrupter.join(10)
        signal.signal(signal.SIGUSR1, previous)
    _gone_within(hub, seen["gate"]["gateId"], seen["at"])
    assert client.stats()["held"] == 0
    _ended_cancelled(hub, run.run_id, "tool:charge", "Interrupted")
