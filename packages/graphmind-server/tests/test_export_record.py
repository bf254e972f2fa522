"""`graphmind record` and `graphmind import`: the JSONL round trip, secret stripping, formats, errors."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphmind_server.cli import main


@pytest.fixture(autouse=True)
def _kit(export_fixture):
    global SECRET_VALUES, contains_secret, lines_of, record_agent_run
    SECRET_VALUES = export_fixture.SECRET_VALUES
    contains_secret = export_fixture.contains_secret
    lines_of = export_fixture.lines_of
    record_agent_run = export_fixture.record_agent_run


def _recorded_db(make_hub, tmp_path: Path, runs: int = 2, hubs: list | None = None) -> Path:
    db = tmp_path / "hub.db"
    hub = make_hub(db=db)
    if hubs is not None:
        hubs.append(hub)
    app = hub.app(app="travel", client_id="client-1")
    for i in range(runs):
        record_agent_run(app, f"run-{i}")
    hub.wait_for(
        lambda: all(hub.api("GET", f"/api/runs/run-{i}")[1].get("status") == "error" for i in range(runs)),
        10,
        "runs stored",
    )
    return db


def _record(db: Path, out: Path, *args: str) -> str:
    assert main(["record", "--db", str(db), "--out", str(out), *args]) == 0
    return out.read_text(encoding="utf-8")


def test_record_import_record_is_byte_equal_and_secrets_are_stripped(make_hub, tmp_path, capsys):
    hubs: list = []
    db = _recorded_db(make_hub, tmp_path, hubs=hubs)
    first = _record(db, tmp_path / "a.jsonl")  # the hub is still running: read-only, WAL-safe
    err = capsys.readouterr().err
    hubs[0].stop()
    assert _record(db, tmp_path / "stopped.jsonl") == first  # and with no hub running
    assert contains_secret(first) == []
    assert "removed 16 value(s) under secret-looking keys" in err  # 7 in events + the run meta, per run
    items = lines_of(first)
    assert items[0] == {"type": "graphmind.export", "version": 1}
    assert [i["type"] for i in items].count("run") == 2
    tool = next(
        i["event"]
        for i in items
        if i["type"] == "event"
        and i["event"].get("instanceId") == "call-1"
        and i["event"]["type"] == "node.started"
    )
    assert tool["input"]["auth"] == {"access_token": "__REDACTED__", "token": "__REDACTED__"}
    assert tool["input"]["headers"] == [["Cookie", "__REDACTED__"], ["Accept", "json"]]
    assert tool["input"]["city"] == "Lisbon"

    fresh = tmp_path / "fresh.db"
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", str(fresh)]) == 0
    assert "2 run(s), 20 new event(s) stored" in capsys.readouterr().err
    second = _record(fresh, tmp_path / "b.jsonl")
    assert second.encode() == first.encode()

    # A second import stores nothing and changes nothing.
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", str(fresh)]) == 0
    assert "0 new event(s)" in capsys.readouterr().err
    assert _record(fresh, tmp_path / "c.jsonl").encode() == first.encode()


def test_keep_secrets_keeps_them_with_a_warning_and_round_trips(make_hub, tmp_path, capsys):
    db = _recorded_db(make_hub, tmp_path, runs=1)
    kept = _record(db, tmp_path / "k.jsonl", "--keep-secrets")
    assert sorted(contains_secret(kept)) == sorted(SECRET_VALUES)
    assert "--keep-secrets" in capsys.readouterr().err
    assert '"token":"__REDACTED__"' in kept  # already redacted by the app: stays so
    fresh = tmp_path / "fresh.db"
    assert main(["import", str(tmp_path / "k.jsonl"), "--db", str(fresh)]) == 0
    assert _record(fresh, tmp_path / "k2.jsonl", "--keep-secrets") == kept


def test_import_keeps_ids_and_summaries_event_for_event(make_hub, tmp_path):
    db = _recorded_db(make_hub, tmp_path, runs=1)
    _record(db, tmp_path / "a.jsonl", "--keep-secrets")
    fresh = tmp_path / "fresh.db"
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", str(fresh)]) == 0
    q = "SELECT client_id, seq, type, body FROM events ORDER BY cursor"
    with sqlite3.connect(db) as a, sqlite3.connect(fresh) as b:
        # Imported clients live in their own namespace (export/namespace.py); nothing else changes.
        original = [("import:" + c, s, t, json.loads(body)) for c, s, t, body in a.execute(q)]
        imported = [(c, s, t, json.loads(body)) for c, s, t, body in b.execute(q)]
        assert imported == original
        cols = "id, app, name, status, started_at, ended_at, node_count, event_count, meta"
        assert (
            b.execute(f"SELECT {cols} FROM runs").fetchall()
            == a.execute(f"SELECT {cols} FROM runs").fetchall()
        )
        assert b.execute("SELECT client_id FROM runs").fetchall() == [("import:client-1",)]
        ncols = "run_id, node_id, kind, name, executions, status, position"
        assert (
            b.execute(f"SELECT {ncols} FROM nodes ORDER BY run_id, position").fetchall()
            == a.execute(f"SELECT {ncols} FROM nodes ORDER BY run_id, position").fetchall()
        )


def test_an_abandoned_run_keeps_its_status_through_import(make_hub, tmp_path):
    db = tmp_path / "hub.db"
    hub = make_hub(db=db, abandon_grace_ms=0)
    app = hub.app(app="travel", client_id="gone")
    app.run_started("r-ab", "trip")
    app.node_started("r-ab", "tool:x", "i1")
    hub.wait_for(lambda: hub.api("GET", "/api/runs/r-ab")[1].get("eventCount") == 2, 5, "events stored")
    app.drop()
    hub.wait_for(lambda: hub.api("GET", "/api/runs/r-ab")[1].get("status") == "abandoned", 5, "abandoned")
    first = _record(db, tmp_path / "a.jsonl")
    fresh = tmp_path / "fresh.db"
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", str(fresh)]) == 0
    assert _record(fresh, tmp_path / "b.jsonl") == first
    assert '"status":"abandoned"' in first


def test_a_runs_dropped_count_is_exported_said_on_stderr_and_imported(make_hub, tmp_path, capsys):
    from graphmind import protocol as proto

    db = tmp_path / "hub.db"
    hub = make_hub(db=db)
    app = hub.app(app="travel", client_id="lossy")
    app.run_started("r-gap", "trip")
    app.send(proto.dropped({"r-gap": {"hub_stalled": 1234}}))
    hub.wait_for(lambda: hub.api("GET", "/api/runs/r-gap")[1]["dropped"]["count"] == 1234, 5, "the count")
    capsys.readouterr()
    first = _record(db, tmp_path / "a.jsonl")
    err = capsys.readouterr().err
    assert "run r-gap: 1,234 events were not recorded (hub_stalled: 1,234;" in err
    run = json.loads(first.splitlines()[1])["run"]
    assert run["dropped"] == {"count": 1234, "reasons": {"hub_stalled": 1234}}
    fresh = tmp_path / "fresh.db"
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", str(fresh)]) == 0
    assert _record(fresh, tmp_path / "b.jsonl") == first


def test_selection_by_id_last_and_app(make_hub, tmp_path):
    db = _recorded_db(make_hub, tmp_path, runs=3)

    def run_ids(*args: str) -> list[str]:
        return [
            i["run"]["id"] for i in lines_of(_record(db, tmp_path / "s.jsonl", *args)) if i["type"] == "run"
        ]

    assert run_ids() == ["run-0", "run-1", "run-2"]  # oldest first
    assert run_ids("--last", "2") == ["run-1", "run-2"]
    assert run_ids("run-2", "run-0") == ["run-2", "run-0"]
    assert run_ids("--app", "travel", "--last", "1") == ["run-2"]
    assert run_ids("--app", "other") == []


def test_json_format_is_one_document_with_the_same_runs_and_events(make_hub, tmp_path):
    db = _recorded_db(make_hub, tmp_path, runs=2)
    doc = json.loads(_record(db, tmp_path / "e.json", "--format", "json"))
    assert doc["type"] == "graphmind.export" and [r["id"] for r in doc["runs"]] == ["run-0", "run-1"]
    assert [len(r["events"]) for r in doc["runs"]] == [10, 10]
    assert doc["runs"][0]["events"][0]["event"]["type"] == "run.started"
    assert contains_secret(json.dumps(doc)) == []


def test_bad_input_is_one_line_and_writes_nothing(make_hub, tmp_path, capsys):
    db = _recorded_db(make_hub, tmp_path, runs=1)
    out = tmp_path / "x.jsonl"
    assert main(["record", "--db", str(db), "--out", str(out), "nope"]) == 2
    assert capsys.readouterr().err.startswith("graphmind: no run 'nope' in the database")
    assert not out.exists()
    assert main(["record", "--db", str(tmp_path / "missing.db")]) == 2
    assert "no database at" in capsys.readouterr().err

    good = _record(db, tmp_path / "g.jsonl")
    capsys.readouterr()
    broken = tmp_path / "broken.jsonl"
    lines = good.splitlines()
    broken.write_text("\n".join([*lines[:-1], "{not json"]) + "\n", encoding="utf-8")
    fresh = tmp_path / "fresh.db"
    assert main(["import", str(broken), "--db", str(fresh)]) == 2
    err = capsys.readouterr().err
    assert f"{broken}:{len(lines)} is not JSON" in err and err.count("\n") == 1
    # Nothing was written: the file is checked whole before the first event is stored.
    assert (
        not fresh.exists() or sqlite3.connect(fresh).execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    )

    (tmp_path / "other.jsonl").write_text('{"hello": 1}\n', encoding="utf-8")
    assert main(["import", str(tmp_path / "other.jsonl"), "--db", str(fresh)]) == 2
    assert "not a GraphMind JSONL export" in capsys.readouterr().err


def test_import_refuses_a_database_a_hub_is_using(make_hub, tmp_path, capsys):
    db = _recorded_db(make_hub, tmp_path, runs=1)
    _record(db, tmp_path / "a.jsonl")
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", str(db)]) == 2
    assert "is in use (a running hub" in capsys.readouterr().err


def test_record_runs_as_a_command_and_writes_to_stdout(make_hub, tmp_path):
    db = _recorded_db(make_hub, tmp_path, runs=1)
    proc = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "record", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert lines_of(proc.stdout)[1]["run"]["id"] == "run-0"
    assert "1 run(s), 10 event(s)" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("bad", ["0", "x"])
def test_last_must_be_positive(tmp_path, capsys, bad):
    with pytest.raises(SystemExit) as exc:
        main(["record", "--last", bad])
    assert exc.value.code == 2
    assert "--last must be a whole number >= 1" in capsys.readouterr().err


def test_large_exports_report_progress_on_stderr(make_hub, tmp_path, capsys, monkeypatch):
    from graphmind_server.export import record

    monkeypatch.setattr(record, "PROGRESS_FROM_EVENTS", 2000)
    monkeypatch.setattr(record, "PROGRESS_EVERY_S", 0.0)
    db = tmp_path / "hub.db"
    hub = make_hub(db=db)
    app = hub.app(app="big")
    app.run_started("big", "crawl")
    for i in range(2500):
        app.event(
            "node.token", "big", nodeId="llm:step", instanceId="s1", deltas=[{"t": "text", "v": str(i)}]
        )
    hub.wait_for(lambda: hub.api("GET", "/api/runs/big")[1].get("eventCount") == 2501, 20, "events stored")
    _record(db, tmp_path / "big.jsonl")
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == ["graphmind record: 1000/2501 events", "graphmind record: 2000/2501 events"]
    assert err[2].startswith("graphmind record: 1 run(s), 2501 event(s)")


def test_a_lone_surrogate_round_trips_and_the_file_stays_utf8(make_hub, tmp_path):
    from graphmind_server.export.otlp_http import to_protobuf

    db = tmp_path / "hub.db"
    hub = make_hub(db=db)
    app = hub.app(app="odd", client_id="odd-1")
    app.run_started("odd", "trip")
    app.seq += 1
    app.send(
        '{"type":"node.started","seq":' + str(app.seq) + ',"ts":1.0,"runId":"odd","nodeId":"tool:t",'
        '"instanceId":"i","kind":"tool","name":"t","parentInstanceId":"odd","input":"half \\ud800 pair"}'
    )
    hub.wait_for(lambda: hub.api("GET", "/api/runs/odd")[1].get("eventCount") == 2, 5, "events stored")
    first = _record(db, tmp_path / "a.jsonl")
    (tmp_path / "a.jsonl").read_bytes().decode("utf-8")  # valid UTF-8
    assert "half \\ud800 pair" in first
    fresh = tmp_path / "fresh.db"
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", str(fresh)]) == 0
    assert _record(fresh, tmp_path / "b.jsonl") == first
    otlp_doc = json.loads(_record(db, tmp_path / "o.json", "--format", "otlp"))
    assert to_protobuf(otlp_doc)  # protobuf strings must be UTF-8: the surrogate became U+FFFD


def test_a_subcommand_error_points_at_that_subcommands_help(capsys):
    with pytest.raises(SystemExit):
        main(["record", "--db"])
    assert capsys.readouterr().err == (
        "graphmind: argument --db: expected one argument (see graphmind record --help)\n"
    )


def _export_lines(make_hub, tmp_path):
    db = _recorded_db(make_hub, tmp_path, runs=1)
    return _record(db, tmp_path / "good.jsonl").splitlines()


@pytest.mark.parametrize(
    ("line_index", "change", "names"),
    [
        (1, lambda item: item["run"].update(startedAt=None), ["run.startedAt", "got null"]),
        (1, lambda item: item["run"].update(clientId=None), ["run.clientId"]),
        (1, lambda item: item["run"].update(status="weird"), ["run.status"]),
        (-1, lambda item: item["event"].update(seq=2**64), ["event.seq", str(2**64)]),
        (-1, lambda item: item["event"].update(ts=True), ["event.ts"]),
        (-1, lambda item: item.update(clientId=""), ["clientId"]),
    ],
)
def test_a_malformed_import_writes_nothing_and_prints_one_line_naming_line_and_field(
    make_hub, tmp_path, capsys, line_index, change, names
):
    lines = _export_lines(make_hub, tmp_path)
    index = line_index % len(lines)
    item = json.loads(lines[index])
    change(item)
    lines[index] = json.dumps(item)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fresh = tmp_path / "fresh.db"
    capsys.readouterr()
    assert main(["import", str(bad), "--db", str(fresh)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{bad}:{index + 1}: " in err, err
    for name in names:
        assert name in err, err
    assert (
        not fresh.exists() or sqlite3.connect(fresh).execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    )


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_an_import_with_a_non_finite_number_is_refused(make_hub, tmp_path, capsys, literal):
    lines = _export_lines(make_hub, tmp_path)
    item = json.loads(lines[-1])
    item["event"]["output"] = "@@"
    lines[-1] = json.dumps(item).replace('"@@"', literal)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fresh = tmp_path / "fresh.db"
    capsys.readouterr()
    assert main(["import", str(bad), "--db", str(fresh)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}:{len(lines)}: " in err, err
    assert (
        not fresh.exists() or sqlite3.connect(fresh).execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    )


def test_a_forged_client_id_import_leaves_a_live_apps_next_events_intact(make_hub, tmp_path):
    """A file reusing a live app's clientId with higher seqs: the app's later events are all stored."""
    db = tmp_path / "hub.db"
    forged = tmp_path / "forged.jsonl"
    now = time.time() * 1000  # recent: the hub's start-up retention keeps it
    run = {
        "id": "forged",
        "app": "x",
        "name": "forged",
        "status": "finished",
        "startedAt": now,
        "clientId": "live-1",
    }
    events = [
        {
            "type": "event",
            "runId": "forged",
            "clientId": "live-1",
            "event": {"type": "node.started", "seq": seq, "ts": now, "runId": "forged"},
        }
        for seq in range(1, 1003)
    ]
    text = "\n".join(
        json.dumps(x)
        for x in [{"type": "graphmind.export", "version": 1}, {"type": "run", "run": run}, *events]
    )
    forged.write_text(text + "\n", encoding="utf-8")
    assert main(["import", str(forged), "--db", str(db)]) == 0
    hub = make_hub(db=db)
    app = hub.app(client_id="live-1")
    app.run_started("mine")
    for i in range(20):
        app.node_started("mine", "tool:t", f"i{i}")
    hub.wait_for(
        lambda: hub.api("GET", "/api/runs/mine")[1].get("eventCount") == 21, 10, "the live app's events"
    )
    assert hub.api("GET", "/api/runs/forged")[1]["eventCount"] == 1002


def test_record_into_a_closed_pipe_is_quiet_and_into_a_full_disk_is_one_line(make_hub, tmp_path):
    import subprocess
    import sys

    db = _recorded_db(make_hub, tmp_path, runs=2)
    cmd = f"{sys.executable} -m graphmind_server record --db {db}"
    piped = subprocess.run(f"{cmd} | head -1", shell=True, capture_output=True, text=True, timeout=60)
    assert piped.stdout.strip() == '{"type":"graphmind.export","version":1}'
    assert "Traceback" not in piped.stderr and "Exception" not in piped.stderr, piped.stderr
    read_end, write_end = os.pipe()
    os.close(read_end)  # a reader that is already gone: the first write fails EPIPE, every time
    try:
        closed = subprocess.run(cmd.split(), stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write_end)
    assert closed.returncode == 0 and closed.stderr == "", closed.stderr
    full = subprocess.run(f"{cmd} > /dev/full", shell=True, capture_output=True, text=True, timeout=60)
    assert full.returncode == 2
    lines = full.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphmind: cannot write the export to stdout"), (
        full.stderr
    )
