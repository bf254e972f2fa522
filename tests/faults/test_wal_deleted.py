"""The database's WAL file deleted under a running hub (issue 47): reads answered 503 until a
restart while `/api/health` said ok. Now health says "not storing: the database's WAL file was
deleted…" until the writer recovers (it checkpoints the lost file's pages through its open
descriptor, then starts a new WAL and the reads reopen), and nothing committed is lost across a
restart."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import graphmind
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure, scaled

CALLS = scaled(200, 2000)


def _reads(hub: HubProcess, n: int = 8) -> list[int]:
    codes: list[int] = []
    threads = [
        threading.Thread(target=lambda: codes.append(hub.api("GET", "/api/runs")[0])) for _ in range(n)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return codes


def _events(hub: HubProcess) -> dict[str, int]:
    return {r["name"]: r["eventCount"] for r in hub.api("GET", "/api/runs?limit=100")[1]["runs"]}


@pytest.mark.faults
def test_a_deleted_wal_is_said_by_health_recovered_and_loses_nothing(tmp_path: Path, home: Path) -> None:
    db = tmp_path / "hub.db"
    hub = HubProcess(db)
    client = graphmind.Client(app="wal", url=hub.ingest_url)
    try:
        assert client.ready(5)
        tool = client.wrap(lambda i: i, name="t")
        with client.run("before"):
            for i in range(CALLS):
                tool(i)
        want = 2 * CALLS + 2
        wait_for(lambda: _events(hub).get("before") == want, 10, "the first run stored")
        wal = db.with_name("hub.db-wal")
        assert wal.exists()
        wal.unlink()
        health = hub.api("GET", "/api/health")[1]
        assert health["storing"] is False, health
        assert "WAL file was deleted" in health["notStoring"], health
        # Health asked the writer to look: it recovers, then every read answers again.
        wait_for(lambda: hub.api("GET", "/api/health")[1]["storing"], 10, "health to say storing again")
        codes = _reads(hub)
        assert codes == [200] * 8, codes
        with client.run("after"):
            for i in range(CALLS):
                tool(i)
        wait_for(lambda: _events(hub).get("after") == want, 10, "the second run stored")
        client.dispose()
        hub.stop()
        hub.start()
        stored = _events(hub)
        figure("WAL deleted under a running hub", f"reads {codes}, after a restart {stored}")
        assert stored == {"before": want, "after": want}, stored
        recovered = [line for line in hub.stderr.splitlines() if "new WAL started" in line]
        assert recovered == [], "the restarted hub had nothing to recover"
    finally:
        client.dispose()
        hub.stop()
    assert "Traceback" not in hub.stderr, hub.stderr


@pytest.mark.faults
def test_a_read_that_fails_on_a_deleted_wal_gets_the_hub_to_recover(tmp_path: Path, home: Path) -> None:
    db = tmp_path / "hub.db"
    with HubProcess(db) as hub:
        client = graphmind.Client(app="wal", url=hub.ingest_url)
        try:
            assert client.ready(5)
            with client.run("r"):
                client.wrap(lambda i: i, name="t")(1)
            wait_for(lambda: _events(hub).get("r") == 4, 10, "the run stored")
            db.with_name("hub.db-wal").unlink()
            first = _reads(hub)  # new read connections fail on the lost WAL: 503, and a look
            later = wait_for(lambda: (c := _reads(hub)) == [200] * 8 and c, 10, "reads to answer again")
            figure("reads after the WAL was deleted", f"first {first}, then {later}")
            assert "WAL file" in hub.stderr and "nothing committed was lost" in hub.stderr, hub.stderr
        finally:
            client.dispose()
