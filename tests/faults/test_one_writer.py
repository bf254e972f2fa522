"""One writer per database (issue 29): a second hub on the same file refuses to start with one line
naming the first hub's port and pid; the first stores every event; a SIGKILLed hub's lock does not
outlive it; a symlink or a hard link to the file is the same file (the lock follows the inode)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def _link(db: Path, how: str) -> Path:
    """Another name of `db`: a symlink, a hard link, or a symlinked directory holding it."""
    if how == "symlink":
        other = db.with_name("other-name.db")
        other.symlink_to(db)
    elif how == "hard link":
        other = db.with_name("other-name.db")
        os.link(db, other)
    else:  # "symlinked directory"
        alias = db.parent.parent / f"{db.parent.name}-alias"
        alias.symlink_to(db.parent, target_is_directory=True)
        other = alias / db.name
    return other


@pytest.mark.parametrize("how", ["symlink", "hard link", "symlinked directory"])
def test_a_second_hub_through_another_name_of_the_db_is_refused(tmp_path: Path, home: Path, how: str) -> None:
    """The lock follows the file, not the path: before, the second hub started and every event sent
    to one of the two was lost."""
    db = tmp_path / "data" / "hub.db"
    with HubProcess(db) as hub:
        assert hub.proc is not None
        other = _link(db, how)
        second = _second_hub(other)
        assert second.returncode == 2, second
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert "in use by another hub" in lines[0] and "--db" in lines[0], lines[0]
        # Either lock names the first hub: the lock file beside the resolved path, or (a hard link)
        # the one of the other name of the same inode found beside it.
        assert f"port {hub.port}" in lines[0] and f"pid {hub.proc.pid}" in lines[0], lines[0]
        assert hub.api("GET", "/api/health")[1]["storing"] is True
        figure(f"second hub through a {how}", lines[0])


def test_the_db_lock_is_free_again_once_the_hub_stopped(tmp_path: Path, home: Path) -> None:
    """The database's own flock goes with the hub: a hub on a hard link of it starts afterwards."""
    db = tmp_path / "hub.db"
    HubProcess(db).stop()
    other = _link(db, "hard link")
    with HubProcess(other) as hub:
        assert hub.api("GET", "/api/health")[0] == 200
