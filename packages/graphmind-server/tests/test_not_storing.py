"""When the database cannot store (here: SQLITE_FULL from a page limit on the writer's connection,
what a full disk raises), the hub keeps what it received, says "not storing: <reason>" (log,
/api/health, the live feed, a `hub.storing` frame to each app) and stores it all once a write
succeeds again (store/stall.py)."""

from __future__ import annotations

import os

from graphmind_server.testing import wait_for


def _store(thub):
    return thub.handle._server.hub.store


def _fill_up(thub) -> None:
    """From now on the database cannot grow: the next write that needs a page fails SQLITE_FULL."""
    conn = _store(thub)._wconn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")


def _free_space(thub) -> None:
    _store(thub)._wconn.execute("PRAGMA max_page_count = 1073741823")


def test_a_full_disk_stops_storing_says_why_and_stores_everything_once_space_returns(thub, capfd):
    app = thub.app()
    app.run_started("r1")
    wait_for(lambda: thub.api("GET", "/api/runs/r1")[0] == 200, what="r1 stored")
    assert thub.api("GET", "/api/health")[1]["storing"] is True
    _fill_up(thub)
    big = "x" * 20_000  # each event needs new pages
    for i in range(40):
        app.node_started("r1", "tool:t", f"i{i}", input=big)
        app.node_finished("r1", "tool:t", f"i{i}", output=i)
    frame = app.expect("hub.storing", timeout=10)
    assert frame["storing"] is False and "disk full" in frame["reason"]
    health = thub.api("GET", "/api/health")[1]
    assert health["storing"] is False and health["notStoring"].startswith("not storing: disk full")
    # Reads answer with what is stored instead of waiting for the stalled writer.
    assert thub.api("GET", "/api/runs/r1", timeout=5)[0] == 200
    app.run_finished("r1")
    late = thub.app()  # an app attaching meanwhile is told right after its welcome
    assert late.expect("hub.storing", timeout=10)["storing"] is False
    _free_space(thub)
    assert app.expect("hub.storing", timeout=10)["storing"] is True
    wait_for(lambda: thub.api("GET", "/api/health")[1]["storing"] is True, what="storing again")
    wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("status") == "finished", what="r1 finished")
    run = thub.api("GET", "/api/runs/r1")[1]
    assert run["eventCount"] == 1 + 80 + 1
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("graphmind: not storing")]
    assert len(lines) == 1, err  # one line per interval
    assert "storing again" in err


def test_a_database_deleted_while_serving_is_not_storing_until_it_comes_back(thub, tmp_path):
    app = thub.app()
    app.run_started("r1")
    wait_for(lambda: thub.api("GET", "/api/runs/r1")[0] == 200, what="r1 stored")
    db = _store(thub).path
    aside = tmp_path / "aside.db"
    os.rename(db, aside)  # gone from its path (the inode lives on, as after `rm`)
    app.node_started("r1", "tool:t", "i1", input=1)
    frame = app.expect("hub.storing", timeout=10)
    assert frame["storing"] is False and "deleted" in frame["reason"]
    os.rename(aside, db)
    assert app.expect("hub.storing", timeout=10)["storing"] is True
    app.run_finished("r1")
    wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("status") == "finished", what="finished")
    assert thub.api("GET", "/api/runs/r1")[1]["eventCount"] == 3


def test_a_writer_that_stops_says_so_in_health_instead_of_storing(thub, monkeypatch):
    """Whatever ends the writer thread (a log line it could not write did, on a full disk), health
    stops saying "storing": the reason names it, and a read answers instead of waiting for it."""
    app = thub.app()
    app.run_started("r1")
    wait_for(lambda: thub.api("GET", "/api/runs/r1")[0] == 200, what="r1 stored")
    writer = _store(thub)._writer

    def broken(batch, consumed):
        raise SystemExit("a bug in the writer")

    monkeypatch.setattr(writer, "_commit", broken)
    app.node_started("r1", "tool:t", "i1", input=1)
    wait_for(lambda: thub.api("GET", "/api/health")[1]["storing"] is False, what="not storing")
    reason = thub.api("GET", "/api/health")[1]["notStoring"]
    assert reason.startswith("not storing: the hub's writer stopped (SystemExit: a bug in the writer)")
    assert thub.api("GET", "/api/runs", timeout=5)[0] == 200
