"""The transport's batches (issue 17): one wake-up and, to a hub that advertises batch frames, one
frame per batch; one frame per event to a hub that does not; nothing lost or delayed that a human
waits for."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import graphmind
from graphmind import protocol as proto
from graphmind._wire import write_loop as _write_loop
from graphmind.testing import FakeHub


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def search(q: str, n: int) -> int:
    return n


def _seqs(hub: FakeHub) -> list[int]:
    return [e["seq"] for e in hub.events if e.get("type") in proto.EVENT_TYPES]


def _buffer_then_attach(hub: FakeHub, calls: int) -> graphmind.Client:
    """`calls` tool calls made detached, then the hub comes up: the replay sends the ring in batches."""
    port = free_port()
    client = graphmind.Client(app="t", url=f"ws://127.0.0.1:{port}/ingest", retry_interval=3600)
    tool = client.wrap(search)
    with client.run("r"):
        for i in range(calls):
            tool("q", i)
    hub.start(port)
    assert client.ready(5)
    total = 2 * calls + 2
    hub.wait_for(lambda: len(_seqs(hub)) >= total, what="the replay")
    return client


def test_frames_groups_texts_up_to_the_size_bound_and_sends_a_lone_event_as_itself() -> None:
    texts = ['{"type":"a"}', '{"type":"b"}', "x" * (_write_loop.MAX_FRAME_CHARS - 5), '{"type":"c"}']
    out = list(_write_loop.frames(texts, batches=True))
    assert out == [proto.batch(texts[:2]), texts[2], texts[3]]
    assert list(_write_loop.frames(texts, batches=False)) == texts
    assert list(_write_loop.frames(texts[:1], batches=True)) == texts[:1]
    assert proto.batch(texts[:2]) == '{"type":"batch","events":[{"type":"a"},{"type":"b"}]}'


def test_a_replay_to_a_hub_that_takes_batches_is_one_frame_per_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_write_loop, "BATCH", 256)
    with FakeHub() as hub:
        client = _buffer_then_attach(hub, 300)  # 602 events: batches of 256, 256, 90
        assert _seqs(hub) == list(range(1, 603))
        assert (hub.frames, hub.batch_frames) == (3, 3)
        client.dispose()
    assert hub.protocol_errors == []


def test_one_look_at_the_ring_takes_what_a_back_to_back_app_makes_between_two_gil_turns() -> None:
    """The transport thread gets the GIL back about every switch interval (5 ms) while the app calls
    back to back (~400 events here). Taking 256 events per look it fell behind such an app, and the
    ring overflowed (bench: ~3,000 of 40,000 events dropped); 2,000 events now go in one look."""
    with FakeHub() as hub:
        client = _buffer_then_attach(hub, 1000)  # returns once the hub has every event
        assert client._transport is not None and client._transport.flush(idle=5) == 0
        assert client._transport._progress == 1 and (hub.frames, hub.batch_frames) == (1, 1)
        assert _seqs(hub) == list(range(1, 2003))
        client.dispose()


def test_a_hub_without_batch_frames_gets_one_frame_per_event() -> None:
    with FakeHub(batch=False) as hub:
        client = _buffer_then_attach(hub, 300)
        assert _seqs(hub) == list(range(1, 603))
        assert (hub.frames, hub.batch_frames) == (602, 0)
        tool = client.wrap(search)
        tool("live", 4242)  # live events too
        hub.wait_for(lambda: hub.events[-1].get("output") == 4242, what="the live call's events")
        assert hub.frames == len(_seqs(hub))
        client.dispose()
    assert hub.batch_frames == 0 and hub.protocol_errors == []


def test_the_events_of_one_batching_window_share_one_wake_up_and_one_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_write_loop, "LINGER_S", 0.5)  # wide, so the calls below all fall in it
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url)
        assert client.ready(5)
        transport = client._transport
        assert transport is not None
        tool = client.wrap(search)
        batches = transport._progress
        with client.run("r"):
            for i in range(50):
                tool("q", i)
        hub.wait_for(lambda: len(_seqs(hub)) == 102, what="the run")
        assert transport.flush(idle=5) == 0  # the writer has counted its batch
        assert transport._progress - batches == 1  # one wake-up, one batch
        assert hub.batch_frames == 1 and hub.frames == 1
        client.dispose()


def test_a_held_gate_its_answer_and_a_debug_ack_do_not_wait_for_the_batching_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_write_loop, "LINGER_S", 60.0)  # a window no test could wait out
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url, pause_timeout=30)
        assert client.ready(5)
        tool = client.wrap(search)
        tool("q", 0)  # its events start a 60 s window
        hub.set_debug(breakpoints=[("tool:search", "before")])  # waits for the ack: it cuts the window
        results: list[int] = []
        caller = threading.Thread(target=lambda: results.append(tool("q", 7)))
        caller.start()
        paused = hub.next_paused(timeout=5)  # the exec.paused cuts the window too
        assert paused["nodeId"] == "tool:search" and paused["gate"] == "before"
        hub.resolve(paused["gateId"], "continue")
        # the app's exec.resumed (what the hub's POST /api/gates waits for) cuts the window as well
        hub.wait_for(
            lambda: any(e.get("type") == "exec.resumed" for e in hub.events), timeout=5, what="exec.resumed"
        )
        caller.join(5)
        assert results == [7]
        assert client._transport is not None and client._transport.flush(idle=5) == 0  # flush cuts it
        client.dispose()


def test_a_replay_after_a_dropped_connection_loses_nothing() -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url, retry_interval=0.1)
        assert client.ready(5)
        tool = client.wrap(search)
        with client.run("r"):
            for i in range(2000):
                tool("q", i)
                if i == 700:
                    hub.drop_connections()  # mid-stream: some batches sent, some in flight, some not yet
        hub.wait_for(lambda: set(_seqs(hub)) >= set(range(1, 4003)), timeout=15, what="every event")
        assert hub.batch_frames >= 2
        client.dispose()


EXITING = textwrap.dedent("""
    import graphmind as gm, sys
    gm.configure(app="exiting", url=sys.argv[1])
    tool = gm.wrap(lambda i: i, name="t")
    with gm.run("burst"):
        for i in range(1500):
            tool(i)
""")


@pytest.mark.parametrize("batch", [True, False], ids=["batch-hub", "single-frame-hub"])
def test_the_exit_flush_sends_every_event_to_either_kind_of_hub(tmp_path: Path, batch: bool) -> None:
    script = tmp_path / "exiting.py"
    script.write_text(EXITING)
    with FakeHub(batch=batch) as hub:
        proc = subprocess.run(
            [sys.executable, str(script), hub.url], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        hub.wait_for(lambda: len(_seqs(hub)) >= 3002, what="every event")
        assert sorted(set(_seqs(hub))) == list(range(1, 3003))
        assert (hub.batch_frames > 0) is batch and hub.protocol_errors == []


def test_a_control_frame_alone_is_not_followed_by_an_empty_batch_frame() -> None:
    """The writer woken for a debug.ack only took no event: it sent the ack and an empty batch
    frame (`{"type":"batch","events":[]}`) after it, one extra frame per ack or gate.unknown."""
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url)
        try:
            assert client.ready(5)
            with client.run("r"):
                client.wrap(search)("q", 1)
            hub.wait_for(lambda: len(_seqs(hub)) == 4, what="the run's events")
            frames_before, batches_before = hub.frames, hub.batch_frames
            hub.set_debug(mode="run")  # waits for the client's debug.ack (a control frame)
            with client.run("r2"):  # anything after the ack arrives after any frame sent with it
                pass
            hub.wait_for(lambda: len(_seqs(hub)) == 6, what="the second run")
            extra_frames = hub.frames - frames_before - 1  # the ack
            # the second run's two events: one batch frame, or two frames of one event each
            assert extra_frames in (1, 2), (hub.frames, frames_before)
            assert hub.batch_frames - batches_before == (1 if extra_frames == 1 else 0)
        finally:
            client.dispose()
