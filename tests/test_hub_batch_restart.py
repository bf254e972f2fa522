"""Batch frames against the real hub (issue 17): a hub killed while batches are on the wire, then
restarted on the same database, ends with every event stored exactly once (it keeps one event per
(clientId, seq), so the client's replay of its whole ring fills the gap and duplicates nothing)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import graphmind
from graphmind import protocol as proto
from graphmind_server.testing import HubProcess, wait_for

CALLS = 3000


def test_a_hub_killed_mid_batch_and_restarted_stores_every_event_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frames: list[int] = []
    real_batch = proto.batch
    monkeypatch.setattr(proto, "batch", lambda texts: frames.append(len(texts)) or real_batch(texts))
    hub = HubProcess(tmp_path / "hub.db")
    client = graphmind.Client(app="burst", url=hub.ingest_url, retry_interval=0.2, buffer_size=20_000)
    try:
        assert client.ready(5)
        step = client.wrap(lambda i: i, name="step")
        run_ids: list[str] = []
        halfway = threading.Event()

        def agent() -> None:
            with client.run("burst") as run:
                run_ids.append(run.run_id)
                for i in range(CALLS):
                    step(i)
                    if i == CALLS // 3:
                        halfway.set()

        t = threading.Thread(target=agent, daemon=True)
        t.start()
        assert halfway.wait(30)
        wait_for(lambda: frames, 10, "a batch frame sent")
        hub.kill()  # SIGKILL while the app keeps sending: a batch may be cut mid-frame
        t.join(60)
        hub.start(hub.port)
        run_id = run_ids[0]
        total = 2 * CALLS + 2
        wait_for(
            lambda: hub.api("GET", f"/api/runs/{run_id}")[1].get("eventCount") == total, 30, "every event"
        )
        events: list[dict[str, object]] = []
        after = 0
        while True:  # the events API pages
            page = hub.api("GET", f"/api/runs/{run_id}/events?after={after}&limit=5000")[1]
            events.extend(page["events"])
            if not page.get("next"):
                break
            after = page["next"]
        seqs = [e["seq"] for e in events]
        assert seqs == list(range(seqs[0], seqs[0] + total)), "an event is missing or stored twice"
        assert events[-1]["type"] == "run.finished"
        assert max(frames) > 1  # the events went in batch frames
    finally:
        client.dispose()
        hub.stop()
