"""Issue 4 acceptance, durability: SIGKILL the hub mid-run, restart it on the same database."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import graphmind
from graphmind_server.testing import FakeApp, HubProcess, wait_for

GRACE_MS = 1500


def test_a_killed_hub_loses_nothing_and_the_run_completes_after_replay(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path / "hub.db", env={"GRAPHMIND_ABANDON_GRACE_MS": str(GRACE_MS)})
    client = graphmind.Client(app="survivor", url=hub.ingest_url, retry_interval=0.2)
    ghost = FakeApp(hub.ingest_url, app="ghost")
    try:
        assert client.ready(5)
        ghost.run_started("ghost-run")
        step = client.wrap(lambda i: i * 10, name="step")
        go_on = threading.Event()
        run_ids: list[str] = []
        results: list[int] = []

        def agent() -> None:
            with client.run("long") as run:
                run_ids.append(run.run_id)
                results.extend(step(i) for i in range(3))
                go_on.wait(20)
                results.extend(step(i) for i in range(3, 6))

        t = threading.Thread(target=agent, daemon=True)
        t.start()
        wait_for(
            lambda: run_ids and hub.api("GET", f"/api/runs/{run_ids[0]}")[1].get("eventCount", 0) >= 7,
            10,
            "the first three calls stored",
        )
        wait_for(lambda: hub.api("GET", "/api/runs?app=ghost")[1]["runs"], 10, "the ghost's run")
        stored_before = hub.api("GET", f"/api/runs/{run_ids[0]}/events?limit=5000")[1]["events"]

        hub.kill()  # SIGKILL: no flush, no goodbye
        ghost.drop()  # the ghost app dies with it and never comes back
        go_on.set()  # the app carries on detached: these events wait in its buffer
        t.join(10)
        assert results == [0, 10, 20, 30, 40, 50]

        hub.start(hub.port)  # same db, same port: the client's retry finds it
        run_id = run_ids[0]
        run = wait_for(
            lambda: (r := hub.api("GET", f"/api/runs/{run_id}")[1]).get("status") == "finished" and r,
            15,
            "the run to finish after the replay",
        )
        events = hub.api("GET", f"/api/runs/{run_id}/events?limit=5000")[1]["events"]
        assert events[: len(stored_before)] == stored_before  # nothing stored was lost or changed
        seqs = [e["seq"] for e in events]
        assert seqs == sorted(set(seqs)), "a replayed event was stored twice"
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "an event is missing"
        assert [e["type"] for e in events].count("node.finished") == 6
        assert events[-1]["type"] == "run.finished" and run["eventCount"] == len(events)

        # The ghost's run waits out the grace, then is abandoned.
        assert hub.api("GET", "/api/runs/ghost-run")[1]["status"] == "running"
        started = time.monotonic()
        wait_for(lambda: hub.api("GET", "/api/runs/ghost-run")[1]["status"] == "abandoned", 10, "abandoned")
        assert time.monotonic() - started > 0.3
        assert hub.api("GET", f"/api/runs/{run_id}")[1]["status"] == "finished"
    finally:
        client.dispose()
        ghost.close()
        hub.stop()


def test_the_database_of_a_killed_hub_opens_and_keeps_what_was_acknowledged(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path / "hub.db")
    app = FakeApp(hub.ingest_url)
    try:
        app.run_started("r1")
        for i in range(300):
            app.node_started("r1", "tool:t", f"i{i}", input={"i": i})
        # A read is a barrier: once it shows 301 events, they are committed.
        wait_for(lambda: hub.api("GET", "/api/runs/r1")[1].get("eventCount") == 301, 10, "301 events")
        hub.kill()
        hub.start(hub.port)
        events = hub.api("GET", "/api/runs/r1/events?limit=5000")[1]["events"]
        assert [e["seq"] for e in events] == list(range(1, 302))
        assert events[-1]["input"] == {"i": 299}
    finally:
        app.close()
        hub.stop()
