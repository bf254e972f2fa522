"""One writer per database (issue 29): a second hub on the same file refuses to start with one line
naming the first hub's port and pid; the first stores every event; a SIGKILLed hub's lock does not
outlive it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import graphmind
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure, scaled

EVENTS = scaled(4000, 4000)


def _second_hub(db: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND_")}
    env["GRAPHMIND_HOME"] = str(db.parent / "home2")
    return subprocess.run(
        [sys.executable, "-m", "graphmind_server", "serve", "--port", "0", "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )


def test_a_second_hub_on_the_same_db_exits_2_naming_the_first_and_the_first_stores_everything(
    tmp_path: Path, home: Path
) -> None:
    db = tmp_path / "hub.db"
    with HubProcess(db) as hub:
        assert hub.proc is not None
        second = _second_hub(db)
        assert second.returncode == 2, second
        assert second.stdout == ""
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert f"port {hub.port}" in lines[0] and f"pid {hub.proc.pid}" in lines[0], lines[0]
        assert "--db" in lines[0]
        client = graphmind.Client(app="one-writer", url=hub.ingest_url)
        try:
            assert client.ready(5)
            tick = client.wrap(lambda i: i, name="tick")
            with client.run("many") as run:
                for i in range(EVENTS // 2 - 1):
                    tick(i)
            wait_for(
                lambda: hub.api("GET", f"/api/runs/{run.run_id}")[1].get("eventCount") == EVENTS,
                timeout=30,
                what=f"{EVENTS} events stored",
            )
            assert client.stats()["dropped"] == 0
        finally:
            client.dispose()
        figure("events stored by the first hub", EVENTS)


def test_the_lock_of_a_killed_hub_does_not_block_a_restart(tmp_path: Path, home: Path) -> None:
    db = tmp_path / "hub.db"
    hub = HubProcess(db)
    try:
        hub.kill()
        hub.start(0)  # the same db: the kernel dropped the dead hub's lock
        assert hub.api("GET", "/api/health")[0] == 200
    finally:
        hub.stop()
