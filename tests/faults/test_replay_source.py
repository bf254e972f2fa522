"""`graphmind replay SOURCE` tells a run id from a file by its form, never by what exists (issue 47,
docs/replay.md "Where the recording comes from"): another user (uid 65534, as root) plants a
forged cassette named like the run id in a shared directory; the replay run there still reads the
run from the database, and a bare name that is no run but a file here is refused with one line
saying how to name the file (`./NAME`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphmind
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
PYTHON = next((p for p in ("/usr/bin/python3", sys.executable) if os.access(p, os.X_OK)), sys.executable)
FORGED = "FORGED by uid 65534"
AGENT = textwrap.dedent("""
    import graphmind
    client = graphmind.Client(app="pins")
    check = client.wrap(lambda pin: "LIVE", name="check")
    with client.run("unlock"):
        print(check(pin="0000"))
    client.dispose()
""")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory every user may write in (like /tmp: sticky, 1777)."""
    path = Path(tempfile.mkdtemp(prefix="graphmind-shared-"))
    path.chmod(0o1777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def recorded(tmp_path: Path, home: Path) -> tuple[Path, str, str]:
    """(the hub's database, the recorded run's id, a cassette of it with its output forged)."""
    db = tmp_path / "hub.db"
    with HubProcess(db) as hub:
        client = graphmind.Client(app="pins", url=hub.ingest_url)
        try:
            assert client.ready(5)
            check = client.wrap(lambda pin: "REAL", name="check")
            with client.run("unlock"):
                check(pin="0000")
        finally:
            client.dispose()
        run = wait_for(
            lambda: next(
                (r for r in hub.api("GET", "/api/runs")[1]["runs"] if r["status"] == "finished"), None
            ),
            10,
            "the recorded run",
        )
    exported = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "record", run["id"], "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert '"REAL"' in exported
    return db, run["id"], exported.replace('"REAL"', f'"{FORGED}"')


def plant(shared: Path, name: str, text: str) -> Path:
    """Another user writes `text` to `shared/name` (a file it owns)."""
    path = shared / name
    if AS_ROOT:
        subprocess.run(
            [PYTHON, "-S", "-c", "import sys; open(sys.argv[1], 'w').write(sys.stdin.read())", str(path)],
            input=text,
            user=65534,
            check=True,
            timeout=30,
            text=True,
            cwd="/",
        )
        assert path.stat().st_uid == 65534
    else:
        path.write_text(text)
    return path


def replay(source: str, db: Path, cwd: Path, agent: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GRAPHMIND_URL": "ws://127.0.0.1:9/ingest", "GRAPHMIND_TELEMETRY": "off"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "graphmind_server",
            "replay",
            source,
            "--db",
            str(db),
            "--",
            sys.executable,
            str(agent),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )


@pytest.mark.faults
def test_a_planted_file_named_like_the_run_id_is_not_read(
    tmp_path: Path, shared: Path, recorded: tuple[Path, str, str]
) -> None:
    db, run_id, forged = recorded
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    plant(shared, run_id, forged)
    done = replay(run_id, db, shared, agent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "REAL" and FORGED not in done.stdout + done.stderr
    # The file is still reachable when the user names it as a file.
    named = replay(f"./{run_id}", db, shared, agent)
    assert named.returncode == 0 and named.stdout.strip() == FORGED, named.stderr
    figure("planted cassette named like the run id", "not read: the run came from the database")


@pytest.mark.faults
def test_a_bare_name_that_is_no_run_but_a_file_here_is_refused_with_one_line(
    tmp_path: Path, shared: Path, recorded: tuple[Path, str, str]
) -> None:
    db, _, forged = recorded
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    plant(shared, "trip", forged)
    done = replay("trip", db, shared, agent)
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "no run 'trip' in the database" in done.stderr and "write ./trip" in done.stderr
    # A cassette named *.jsonl is a file, as before.
    plant(shared, "trip.jsonl", forged)
    assert replay("trip.jsonl", db, shared, agent).stdout.strip() == FORGED
