"""Retention: the start-up prune keeps exactly what the flags say."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from graphmind_server.testing import FakeApp, HubProcess, wait_for

DAY_MS = 86_400_000


def _seed(hub: HubProcess) -> None:
    """Eight finished runs a minute apart, two old finished runs, and one old run still running."""
    now = time.time() * 1000
    app = FakeApp(hub.ingest_url)
    for i in range(8):
        app.event("run.started", f"recent-{i}", ts=now - i * 60_000, name="r")
        app.event("run.finished", f"recent-{i}", ts=now - i * 60_000 + 5, status="finished")
    for i, days in enumerate((10, 45)):
        app.event("run.started", f"old-{i}", ts=now - days * DAY_MS, name="r")
        app.event("run.finished", f"old-{i}", ts=now - days * DAY_MS + 5, status="error")
    app.event("run.started", "ancient-running", ts=now - 90 * DAY_MS, name="r")
    wait_for(lambda: len(hub.api("GET", "/api/runs?limit=1000")[1]["runs"]) == 11, 10, "11 runs")
    app.close()


def _received_when_dated(db: Path) -> None:
    """As if the hub had received each run when its app dated it: the prune goes by the hub's
    receive time (docs/reliability.md), and these runs were all sent a moment ago."""
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET received_at = started_at")
    conn.close()


def _ids(hub: HubProcess) -> set[str]:
    return {r["id"] for r in hub.api("GET", "/api/runs?limit=1000")[1]["runs"]}


def test_keep_and_days_flags_and_their_variables(tmp_path: Path) -> None:
    hub = HubProcess(
        tmp_path / "hub.db", env={"GRAPHMIND_RETENTION": "off", "GRAPHMIND_ABANDON_GRACE_MS": "600000"}
    )
    try:
        _seed(hub)
        hub.stop()
        _received_when_dated(tmp_path / "hub.db")
        hub.start()  # retention off: everything stays
        assert len(_ids(hub)) == 11
        hub.stop()

        hub.env = {"GRAPHMIND_ABANDON_GRACE_MS": "600000"}
        hub.args = ["--days", "30"]  # the default 200 runs, 30 days: drops old-1 (45 days) only
        hub.start()
        assert _ids(hub) == {f"recent-{i}" for i in range(8)} | {"old-0", "ancient-running"}
        hub.stop()

        hub.env = {
            "GRAPHMIND_KEEP_RUNS": "100",
            "GRAPHMIND_KEEP_DAYS": "5",
            "GRAPHMIND_ABANDON_GRACE_MS": "600000",
        }
        hub.args = ["--keep", "5"]  # the flag beats GRAPHMIND_KEEP_RUNS; the variable sets the days
        hub.start()
        assert _ids(hub) == {f"recent-{i}" for i in range(5)} | {"ancient-running"}
        assert hub.api("GET", "/api/runs/recent-6/events")[0] == 404
    finally:
        hub.stop()
