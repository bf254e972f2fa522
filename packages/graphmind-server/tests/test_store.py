"""The store: schema and migrations, run status over disconnects, retention."""

from __future__ import annotations

import os
import sqlite3
import threading
import time

import pytest

from graphmind_server.store import SCHEMA_VERSION, Store, StoreError
from graphmind_server.store.retention import DAY_MS


def test_a_new_database_is_in_wal_mode_at_the_current_schema(tmp_path):
    store = Store(tmp_path / "sub" / "hub.db")
    store.close()
    conn = sqlite3.connect(tmp_path / "sub" / "hub.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION


def test_a_database_from_a_newer_hub_is_refused_with_one_line(tmp_path):
    Store(tmp_path / "hub.db").close()
    conn = sqlite3.connect(tmp_path / "hub.db")
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=r"schema version 99.*--db"):
        Store(tmp_path / "hub.db")


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    (tmp_path / "hub.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"cannot open the database.*GRAPHMIND_DB"):
        Store(tmp_path / "hub.db")


def test_everything_stored_survives_a_restart(thub):
    app = thub.app()
    app.run_started("r1")
    app.node_started("r1", "tool:a", "i1", input="x")
    app.node_finished("r1", "tool:a", "i1", output="y")
    app.run_finished("r1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("status") == "finished", what="finished")
    before = thub.api("GET", "/api/runs/r1/events")[1]
    thub.restart()
    assert thub.api("GET", "/api/runs/r1/events")[1] == before
    assert thub.api("GET", "/api/runs/r1")[1]["status"] == "finished"


def test_a_run_whose_app_vanished_is_abandoned_after_the_grace(make_hub):
    hub = make_hub(abandon_grace_ms=300)
    app = hub.app()
    app.run_started("r1")
    app.run_started("done")
    app.run_finished("done")
    hub.wait_for(lambda: len(hub.api("GET", "/api/runs")[1]["runs"]) == 2, what="2 runs")
    app.drop()
    started = time.monotonic()
    hub.wait_for(lambda: hub.api("GET", "/api/runs/r1")[1]["status"] == "abandoned", what="abandoned")
    assert time.monotonic() - started >= 0.25
    run = hub.api("GET", "/api/runs/r1")[1]
    assert run["endedAt"] is not None
    assert hub.api("GET", "/api/runs/done")[1]["status"] == "finished"


def test_an_app_that_comes_back_within_the_grace_keeps_its_runs_running(make_hub):
    hub = make_hub(abandon_grace_ms=600)
    app = hub.app(client_id="me")
    app.run_started("r1")
    hub.wait_for(lambda: hub.api("GET", "/api/runs")[1]["runs"], what="the run")
    app.drop()
    again = hub.app(client_id="me")
    time.sleep(0.9)  # past the grace: nothing may happen now
    assert hub.api("GET", "/api/runs/r1")[1]["status"] == "running"
    again.seq = app.seq
    again.run_finished("r1")
    hub.wait_for(lambda: hub.api("GET", "/api/runs/r1")[1]["status"] == "finished", what="finished")


def test_runs_left_running_by_a_previous_hub_get_the_grace_too(make_hub, tmp_path):
    hub = make_hub(abandon_grace_ms=300, db=tmp_path / "a.db")
    app = hub.app()
    app.run_started("r1")
    hub.wait_for(lambda: hub.api("GET", "/api/runs")[1]["runs"], what="the run")
    hub.stop()  # the app is still attached: its run stays running in the database
    hub2 = make_hub(abandon_grace_ms=300, db=tmp_path / "a.db")
    assert hub2.api("GET", "/api/runs/r1")[1]["status"] == "running"
    hub2.wait_for(lambda: hub2.api("GET", "/api/runs/r1")[1]["status"] == "abandoned", what="abandoned")


def _run_at(app, run_id, started_ms, finish=True):
    app.event("run.started", run_id, ts=started_ms, name=run_id, nodeId=f"agent:{run_id}", kind="agent")
    if finish:
        app.event("run.finished", run_id, ts=started_ms + 1, status="finished")


def _seed(hub, now):
    app = hub.app()
    for i in range(6):
        _run_at(app, f"new{i}", now - i * 1000)
    _run_at(app, "old", now - 40 * DAY_MS)
    _run_at(app, "old-running", now - 50 * DAY_MS, finish=False)
    hub.wait_for(lambda: len(hub.api("GET", "/api/runs")[1]["runs"]) == 8, what="8 runs")
    app.close()


def _received_when_dated(db):
    """As if the hub had received each run at the time its app dated it: the prune goes by the
    hub's receive time (store/retention.py), which a test cannot set through the hub."""
    conn = sqlite3.connect(db)
    conn.execute("UPDATE runs SET received_at = started_at")
    conn.commit()
    conn.close()


def _ids(hub):
    return sorted(r["id"] for r in hub.api("GET", "/api/runs?limit=1000")[1]["runs"])


def test_retention_keeps_the_newest_n_and_drops_old_runs_but_never_a_running_one(make_hub, tmp_path):
    now = time.time() * 1000
    hub = make_hub(db=tmp_path / "r.db", retention=False)
    _seed(hub, now)
    hub.stop()
    _received_when_dated(tmp_path / "r.db")
    hub = make_hub(db=tmp_path / "r.db", keep_runs=3, keep_days=30)
    assert _ids(hub) == ["new0", "new1", "new2", "old-running"]
    assert hub.api("GET", "/api/runs/new4/events")[0] == 404


def test_retention_by_days_only(make_hub, tmp_path):
    now = time.time() * 1000
    hub = make_hub(db=tmp_path / "d.db", retention=False)
    _seed(hub, now)
    hub.stop()
    _received_when_dated(tmp_path / "d.db")
    hub = make_hub(db=tmp_path / "d.db", keep_runs=200, keep_days=30)
    assert _ids(hub) == sorted([f"new{i}" for i in range(6)] + ["old-running"])


def test_retention_off_keeps_everything(make_hub, tmp_path):
    now = time.time() * 1000
    hub = make_hub(db=tmp_path / "o.db", retention=False)
    _seed(hub, now)
    hub.stop()
    _received_when_dated(tmp_path / "o.db")
    hub = make_hub(db=tmp_path / "o.db", retention=False, keep_runs=1, keep_days=1)
    assert len(_ids(hub)) == 8


def test_a_second_store_on_the_same_file_is_refused_naming_the_first(tmp_path):
    first = Store(tmp_path / "hub.db", port=4848)
    try:
        with pytest.raises(
            StoreError, match=rf"in use by another hub \(pid {os.getpid()}, port 4848\).*--db"
        ):
            Store(tmp_path / "hub.db")
    finally:
        first.close()
    Store(tmp_path / "hub.db").close()  # released on close
    assert oct((tmp_path / "hub.db.lock").stat().st_mode & 0o777) == "0o600"


def _damaged_db(path):
    """A database with 20,000 events and 8 KB of random bytes written over its middle."""
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.executemany(
        "INSERT INTO events (cursor, run_id, client_id, seq, type, body) VALUES (?,?,?,?,?,?)",
        [(i, "r", "c", i, "x", '{"a":' + str(i) * 20 + "}") for i in range(1, 20_001)],
    )
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(size // 2)
        fh.write(os.urandom(8192))


def test_a_damaged_database_is_refused_with_one_line_saying_how_to_recover(tmp_path):
    _damaged_db(tmp_path / "hub.db")
    with pytest.raises(StoreError) as info:
        Store(tmp_path / "hub.db")
    line = str(info.value)
    assert "\n" not in line
    assert "is damaged" in line and "--db" in line and ".recover" in line, line


def test_the_integrity_check_is_bounded_in_time(tmp_path):
    """The check runs under a timer that interrupts it; an interrupted check refuses nothing."""
    from graphmind_server.store import schema

    class Slow:
        interrupted = threading.Event()

        def interrupt(self):
            self.interrupted.set()

        def execute(self, sql):
            assert self.interrupted.wait(5), "the timer never interrupted the check"
            raise sqlite3.OperationalError("interrupted")

    started = time.monotonic()
    schema.check_integrity(Slow(), tmp_path / "hub.db", budget_s=0.05)  # type: ignore[arg-type]
    assert time.monotonic() - started < 2.0


def test_a_read_the_database_fails_is_a_json_503_without_a_traceback(thub, monkeypatch, caplog):
    from graphmind_server.store import reads

    def broken(*args):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(reads, "list_runs", broken)
    status, body = thub.api("GET", "/api/runs")
    assert status == 503
    assert "cannot read its database" in body["error"]
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
