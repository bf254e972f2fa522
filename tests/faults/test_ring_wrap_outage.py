"""Outages that wrap the ring (issue 29): a hub SIGKILLed while an app emits 2,000 events/s with a
small ring, kept down long enough for the ring to overflow, then restarted on the same db. Every
event is stored or counted, exactly: stored + stats()["dropped"] == emitted. Before the hub's
`stored` confirmations, the events a killed hub had taken but not committed, and that left the
ring before any hub confirmed them, were neither (docs/protocol.md, "Confirming what was stored")."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import graphmind
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure, scaled

RATE = 1000  # tool calls per second: two events each
SECONDS = scaled(3, 10)
DOWN_FOR = 0.8  # the ring of 300 holds 0.15 s of events: it wraps about five times over


def _emit(client: graphmind.Client, started: threading.Event) -> None:
    tool = client.wrap(lambda i: i, name="tick")
    with client.run("steady"):
        started.set()
        t0 = time.perf_counter()
        for i in range(RATE * SECONDS):
            due = t0 + i / RATE
            now = time.perf_counter()
            if due > now:
                time.sleep(due - now)
            tool(i)


def _stored(hub: HubProcess) -> int:
    return sum(r["eventCount"] for r in hub.api("GET", "/api/runs?limit=10")[1]["runs"])


@pytest.mark.faults
@pytest.mark.parametrize("kills", [1, 2])
def test_stored_plus_counted_is_sent_exactly_when_an_outage_wraps_the_ring(tmp_path: Path, kills: int) -> None:
    hub = HubProcess(tmp_path / "hub.db", env={"GRAPHMIND_ABANDON_GRACE_MS": "60000"})
    client = graphmind.Client(app="ring-wrap", url=hub.ingest_url, buffer_size=300)
    try:
        assert client.ready(5)
        started = threading.Event()
        emitter = threading.Thread(target=_emit, args=(client, started), daemon=True)
        emitter.start()
        assert started.wait(5)
        for _ in range(kills):
            time.sleep(SECONDS / (kills + 2))
            hub.kill()
            time.sleep(DOWN_FOR)
            hub.start(hub.port)
        emitter.join(SECONDS + 30)
        assert not emitter.is_alive()
        client.dispose()
        stats = client.stats()
        emitted, dropped = stats["events"], stats["dropped"]
        wait_for(lambda: _stored(hub) >= emitted - dropped, 15, "every event not counted to be stored")
        stored = _stored(hub)
        run = hub.api("GET", "/api/runs?limit=1")[1]["runs"][0]
        figure(
            f"ring-wrap outage x{kills} at 2,000 events/s, ring 300",
            f"emitted {emitted}, stored {stored}, counted {dropped} ({run.get('dropped')})",
        )
        assert dropped > 0, stats  # the ring did wrap
        assert stored + dropped == emitted, (stored, dropped, emitted, run.get("dropped"))
        assert run["dropped"]["count"] == dropped, run  # the hub heard every count
    finally:
        client.dispose()
        hub.stop()
