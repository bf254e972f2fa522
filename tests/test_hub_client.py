"""graphmind.Client against the real hub: the gate rules of protocol.md, end to end."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import graphmind
from graphmind_server.testing import HubProcess, wait_for


@pytest.fixture
def client(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="e2e-client", url=hub.ingest_url, retry_interval=0.2)
    assert c.ready(5)
    yield c
    c.dispose()


def test_put_debug_is_acknowledged_by_the_client(hub: HubProcess, client: graphmind.Client) -> None:
    status, state = hub.api("PUT", "/api/debug", {"mode": "step", "pauseOnError": "tool"})
    assert status == 200 and "pending" not in state
    assert client.debug_state.mode == "step"


def test_an_async_hold_does_not_block_the_event_loop(hub: HubProcess, client: graphmind.Client) -> None:
    hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:fetch", "gate": "before"}]})

    async def fetch() -> str:
        return "fetched"

    gated = client.wrap(fetch, name="fetch")

    async def main() -> tuple[str, int]:
        ticks = 0
        task = asyncio.ensure_future(gated())
        while not task.done():
            ticks += 1
            if ticks == 5:
                gate = await asyncio.to_thread(hub.held_gates)
                await asyncio.to_thread(
                    hub.api, "POST", f"/api/gates/{gate[0]['gateId']}", {"action": "continue"}
                )
            await asyncio.sleep(0.01)
        return task.result(), ticks

    result, ticks = asyncio.run(main())
    assert result == "fetched" and ticks >= 5


def test_parallel_holds_are_answered_independently(hub: HubProcess, client: graphmind.Client) -> None:
    hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:work", "gate": "after"}]})
    gated = client.wrap(lambda n: n, name="work")
    results: dict[int, Any] = {}
    threads = [
        threading.Thread(target=lambda n=n: results.__setitem__(n, gated(n)), daemon=True) for n in range(3)
    ]
    for t in threads:
        t.start()
    gates = hub.held_gates(3)
    assert len({g["gateId"] for g in gates}) == 3
    by_input = {g["output"]: g for g in gates}
    assert (
        hub.api("POST", f"/api/gates/{by_input[1]['gateId']}", {"action": "inject", "value": 100})[0] == 200
    )
    for n in (0, 2):
        assert hub.api("POST", f"/api/gates/{by_input[n]['gateId']}", {"action": "continue"})[0] == 200
    for t in threads:
        t.join(10)
    assert results == {0: 0, 1: 100, 2: 2}


def test_a_pause_request_holds_the_next_gate(hub: HubProcess, client: graphmind.Client) -> None:
    assert hub.api("PUT", "/api/debug", {"pauseOnError": "off"})[0] == 200
    assert hub.api("POST", "/api/pause", {})[0] == 200
    # `pause` has no ack in protocol v1: the API answers once the frame is sent. Wait until the
    # client's reader thread applied it, or on a loaded machine the call may pass first.
    wait_for(lambda: client._hub.pause_pending, 5, "the client to apply the pause")
    gated = client.wrap(lambda: "ran", name="next")
    out: list[str] = []
    t = threading.Thread(target=lambda: out.append(gated()), daemon=True)
    t.start()
    gate = hub.held_gates()[0]
    assert (gate["reason"], gate["gate"], gate["nodeId"]) == ("pause", "before", "tool:next")
    hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})
    t.join(10)
    assert out == ["ran"]


def test_a_hub_that_dies_mid_hold_releases_the_call_with_continue(
    hub: HubProcess, client: graphmind.Client
) -> None:
    hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:slow", "gate": "before"}]})
    gated = client.wrap(lambda: "ran anyway", name="slow")
    out: list[str] = []
    t = threading.Thread(target=lambda: out.append(gated()), daemon=True)
    t.start()
    hub.held_gates()
    hub.kill()
    t.join(10)
    assert out == ["ran anyway"]
