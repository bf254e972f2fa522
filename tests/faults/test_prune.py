"""The start-up prune and the runs list go by the hub's clock, never the app's. Before: with
`--keep 5`, five runs dated 2200 got the run of the day deleted at the next start, and nothing said
so; a clock that jumped back gave a run an `endedAt` an hour before its `startedAt`."""

from __future__ import annotations

import time
from pathlib import Path

from graphmind_server.testing import FakeApp, HubProcess, wait_for

from .conftest import figure

YEAR_2200_MS = 7_258_118_400_000.0


def _runs(hub: HubProcess) -> list[str]:
    return [r["id"] for r in hub.api("GET", "/api/runs?limit=100")[1]["runs"]]


def test_runs_dated_in_the_future_get_nothing_newer_pruned_and_the_prune_says_what_went(
    tmp_path: Path, home: Path
) -> None:
    hub = HubProcess(tmp_path / "hub.db", args=["--keep", "5"])
    try:
        app = FakeApp(hub.ingest_url, app="clocks")
        try:
            for n in range(5):  # five runs whose app's clock says 2200
                ts = YEAR_2200_MS + n
                app.run_started(f"future-{n}", ts=ts)
                app.run_finished(f"future-{n}", ts=ts + 1)
            app.run_started("today")
            app.run_finished("today")
            wait_for(lambda: len(_runs(hub)) == 6, 10, "six runs stored")
        finally:
            app.close()
        # Newest first by when the hub received them: today's run on top, whatever its date.
        assert _runs(hub) == ["today", "future-4", "future-3", "future-2", "future-1", "future-0"]
        hub.restart()  # the start-up prune: keep 5
        kept = _runs(hub)
        lines = [line for line in hub.stderr.splitlines() if "pruned" in line]
    finally:
        hub.stop()
    figure("--keep 5 with five runs dated 2200 and one of today", f"kept {kept}; {lines}")
    assert kept == ["today", "future-4", "future-3", "future-2", "future-1"]
    assert len(lines) == 1, lines
    assert lines[0].startswith("graphmind: pruned 1 run(s) and their 2 event(s) at start-up")
    assert "1 beyond the newest 5 (--keep)" in lines[0]


def test_a_prune_that_removes_nothing_says_nothing(tmp_path: Path, home: Path) -> None:
    hub = HubProcess(tmp_path / "hub.db", args=["--keep", "5"])
    try:
        hub.restart()
        assert "pruned" not in hub.stderr
    finally:
        hub.stop()


def test_a_clock_that_jumps_back_never_ends_a_run_before_it_started(hub: HubProcess) -> None:
    app = FakeApp(hub.ingest_url, app="clocks")
    try:
        now = time.time() * 1000
        app.run_started("jumped", ts=now)
        app.run_finished("jumped", ts=now - 3_600_000)  # the clock went back an hour meanwhile
        run = wait_for(
            lambda: (r := hub.api("GET", "/api/runs/jumped")[1]).get("status") == "finished" and r,
            10,
            "the run finished",
        )
    finally:
        app.close()
    assert run["endedAt"] >= run["startedAt"]
