"""Attached means complete (issue 38, `_wire/backpressure.py`): an emitter waits for room while the hub
takes events; detached, the seed's ring; every loss is counted per run and reason and told to a hub
that advertises `dropped` frames. The stall (a hub that stops taking events) and the event loop's
tick budget are proven against the real hub in tests/faults/test_burst.py; the stall's count here too."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest

import graphmind
from graphmind import protocol as proto
from graphmind._wire import backpressure
from graphmind._wire.backpressure import DETACHED
from graphmind.testing import FakeHub


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_attached_burst_far_past_the_ring_loses_nothing() -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url, buffer_size=20)
        assert client.ready(5)
        tool = client.wrap(lambda i: i, name="burst")
        with client.run("burst"):
            for i in range(2_000):
                tool(i)
        client.dispose()
        stats = client.stats()
        assert stats["dropped"] == 0 and stats["events"] == 4_002
        # The hub reads the last frames after the close handshake may already have completed.
        hub.wait_for(lambda: len({e["seq"] for e in hub.events}) == 4_002, what="every event")
        assert client._transport is not None and client._transport.counters["waits"] > 0
        assert hub.dropped == {}  # nothing lost: no dropped frame


def test_the_unsent_part_never_passes_the_ring_while_attached() -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url, buffer_size=20)
        assert client.ready(5)
        transport = client._transport
        assert transport is not None
        tool = client.wrap(lambda i: i, name="burst")
        worst = 0
        with client.run("burst"):
            for i in range(500):
                tool(i)
                worst = max(worst, transport._unsent, len(transport._ring))
        client.dispose()
    assert worst <= 20


def test_drops_while_attached_and_the_hub_stalled_are_counted_per_run_and_told_to_the_hub(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hub stops taking events (its connection's sends block): after STALL_S the ring drops its
    oldest unsent events, and every one is counted, under `hub_stalled`, in stats() and to the hub
    once it takes events again. (tests/faults/test_burst.py does the same with a SIGSTOPped hub.)"""
    monkeypatch.setattr(backpressure, "STALL_S", 0.3)
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url, buffer_size=20)
        assert client.ready(5)
        transport = client._transport
        assert transport is not None
        ws, release = transport._ws, threading.Event()
        send = ws.send

        def stalled_send(frame: Any) -> Any:
            release.wait(10)  # the hub takes nothing until the test lets it
            return send(frame)

        tool = client.wrap(lambda i: i, name="burst")
        with client.run("stall") as run:
            tool(-1)
            transport.flush()
            ws.send = stalled_send
            for i in range(200):
                tool(i)
            assert transport._stalled, "the hub took nothing for STALL_S: the connection is stalled"
        lost = transport.dropped_by_run.get(run.run_id, {}).get(backpressure.HUB_STALLED, 0)
        assert lost > 0 and client.stats()["dropped"] == lost
        release.set()
        hub.wait_for(lambda: bool(hub.dropped), what="the dropped frame")
        assert hub.dropped == {run.run_id: {backpressure.HUB_STALLED: lost}}
        client.dispose()
        stored = {e["seq"] for e in hub.events}
        assert (
            len(stored) + lost == 1 + 2 * 201 + 1
        )  # run.started, 201 calls, run.finished: each stored or counted
        assert not hub.protocol_errors


def test_a_detached_ring_keeps_the_newest_counts_the_rest_per_run_and_tells_the_hub() -> None:
    port = _free_port()
    client = graphmind.Client(
        app="t", url=f"ws://127.0.0.1:{port}/ingest", buffer_size=10, retry_interval=0.05
    )
    tool = client.wrap(lambda i: i, name="burst")
    with client.run("offline") as run:
        for i in range(20):
            tool(i)
    stats = client.stats()
    assert stats["dropped"] == 32 and stats["buffered"] == 10  # 42 events, the newest 10 kept
    hub = FakeHub().start(port)
    try:
        assert client.ready(5)
        hub.wait_for(lambda: bool(hub.dropped), what="the dropped frame")
        assert hub.dropped == {run.run_id: {DETACHED: 32}}
        hub.wait_for(lambda: len(hub.events) == 10, what="the replay")
        assert [e["seq"] for e in hub.events] == list(range(33, 43))
        assert client.stats()["dropped"] == 32  # folded into the counter at the attach: once
        client.dispose()
        assert client.stats()["dropped"] == 32
        assert not hub.protocol_errors
    finally:
        hub.stop()


def test_a_run_the_detached_ring_lost_whole_is_counted_but_not_sent_as_a_run() -> None:
    port = _free_port()
    client = graphmind.Client(
        app="t", url=f"ws://127.0.0.1:{port}/ingest", buffer_size=10, retry_interval=0.05
    )
    tool = client.wrap(lambda i: i, name="burst")
    with client.run("gone") as gone:
        for i in range(10):
            tool(i)
    with client.run("kept") as kept:
        for i in range(10):
            tool(i)
    assert client.stats()["dropped"] == 34  # 44 events, the newest 10 kept: all of "kept"'s last ones
    hub = FakeHub().start(port)
    try:
        assert client.ready(5)
        hub.wait_for(lambda: bool(hub.dropped), what="the dropped frame")
        assert gone.run_id not in hub.dropped  # no empty run for the hub to show
        assert hub.dropped == {"": {DETACHED: 22}, kept.run_id: {DETACHED: 12}}
        assert client.stats()["dropped"] == 34
        client.dispose()
    finally:
        hub.stop()


def test_a_hub_without_the_capability_never_gets_a_dropped_frame() -> None:
    port = _free_port()
    client = graphmind.Client(
        app="t", url=f"ws://127.0.0.1:{port}/ingest", buffer_size=5, retry_interval=0.05
    )
    with client.run("offline"):
        for i in range(10):
            client.wrap(lambda i: i, name="t")(i)
    hub = FakeHub(dropped=False).start(port)
    try:
        assert client.ready(5)
        hub.wait_for(lambda: len(hub.events) == 5, what="the replay")
        client.dispose()
        assert not hub.protocol_errors and not hub.dropped
        assert proto.DROPPED not in {e["type"] for e in hub.events}
    finally:
        hub.stop()


def test_losses_reported_from_elsewhere_reach_the_hub_too() -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url)
        assert client.ready(5)
        assert client._transport is not None
        client._transport.report_lost("r-1", "unencodable", 2)
        hub.wait_for(lambda: bool(hub.dropped), what="the dropped frame")
        assert hub.dropped == {"r-1": {"unencodable": 2}}
        assert client.stats()["dropped"] == 2
        client.dispose()


def test_has_capability_reads_only_a_list() -> None:
    welcome: dict[str, Any] = {"capabilities": ["batch", "dropped"]}
    assert proto.has_capability(welcome, proto.DROPPED) and proto.takes_batches(welcome)
    assert not proto.has_capability({"capabilities": "dropped"}, proto.DROPPED)
    assert not proto.has_capability({}, proto.DROPPED)
    assert proto.dropped({"r": {"x": 1}}) == {"type": "dropped", "runs": {"r": {"x": 1}}}
