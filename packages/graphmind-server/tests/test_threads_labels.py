"""Threads and labels (docs/api.md "Threads", "Labels"): the store keeps a run's thread and a
person's notes and tags, the list and search filter on them, `graphmind record` / `import` carry
them, compare shows them — against an in-process hub and frame-level fake apps."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from graphmind_server.cli import main
from graphmind_server.store.schema import MIGRATIONS, migrate


def turn(app: Any, run_id: str, thread: str | None, ask: str, answer: str) -> None:
    fields = {"thread": thread} if thread is not None else {}
    app.run_started(run_id, name="chat", **fields)
    app.node_started(
        run_id, "llm:step", f"{run_id}-s", input={"messages": [{"role": "user", "content": ask}]}
    )
    app.node_finished(run_id, "llm:step", f"{run_id}-s", output={"role": "assistant", "content": answer})
    app.run_finished(run_id)


def test_a_thread_is_kept_filtered_on_and_read_as_turns(thub: Any) -> None:
    app = thub.app(app="chat-app")
    turn(app, "t1", "conv-1", "hello", "hi there")
    turn(app, "o1", None, "unrelated", "sure")
    turn(app, "t2", " conv-1 ", "and again", "again hi")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 3, what="3 runs")
    runs = {r["id"]: r for r in thub.api("GET", "/api/runs")[1]["runs"]}
    assert runs["t1"]["thread"] == runs["t2"]["thread"] == "conv-1" and runs["o1"]["thread"] is None
    assert [r["id"] for r in thub.api("GET", "/api/runs?thread=conv-1")[1]["runs"]] == ["t2", "t1"]
    status, body = thub.api("GET", "/api/threads")
    assert status == 200 and body["threads"][0]["thread"] == "conv-1" and body["threads"][0]["runs"] == 2
    status, body = thub.api("GET", "/api/threads/conv-1")
    assert [r["id"] for r in body["runs"]] == ["t1", "t2"]  # oldest first: a transcript
    assert body["runs"][1]["turn"]["output"] == {"role": "assistant", "content": "again hi"}
    assert body["runs"][0]["turn"]["input"]["messages"][0]["content"] == "hello"
    assert thub.api("GET", "/api/threads/nope")[0] == 404
    hits = thub.api("GET", "/api/search?q=hi&thread=conv-1")[1]["hits"]
    assert {h["runId"] for h in hits} == {"t1", "t2"}


def test_labels_are_stored_searched_filtered_and_removed(thub: Any) -> None:
    app = thub.app(app="chat-app")
    turn(app, "r1", None, "refund please", "done")
    turn(app, "r2", None, "weather", "sunny")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 2, what="2 runs")
    status, body = thub.api(
        "PUT", "/api/runs/r1/labels", json={"note": "wrong refund amount", "tags": ["bug", " bug", "vip"]}
    )
    assert status == 200 and body["labels"] == {"note": "wrong refund amount", "tags": ["bug", "vip"]}
    status, body = thub.api("PUT", "/api/runs/r2/nodes/llm:step/labels", json={"tags": ["slow"]})
    assert status == 200 and body["nodeId"] == "llm:step"
    ids = lambda q: [r["id"] for r in thub.api("GET", f"/api/runs?{q}")[1]["runs"]]  # noqa: E731
    assert ids("tag=vip") == ["r1"] and ids("tag=slow") == ["r2"] and ids("tag=nope") == []
    assert ids("q=amount") == ["r1"]  # a word of a note, not in any event
    assert ids("q=refund%20amount") == ["r1"]  # one word from the events, one from the note
    hits = thub.api("GET", "/api/search?q=amount")[1]["hits"]
    assert hits[0]["type"] == "label" and hits[0]["runId"] == "r1" and "#vip" in hits[0]["snippet"]
    run = thub.api("GET", "/api/runs/r2")[1]
    assert run["labels"] == {"note": "", "tags": []} and run["nodeLabels"] == {
        "llm:step": {"note": "", "tags": ["slow"]}
    }
    assert thub.api("PUT", "/api/runs/nope/labels", json={"tags": ["x"]})[0] == 404
    status, body = thub.api("PUT", "/api/runs/r1/labels", json={"tags": "bug"})
    assert status == 400 and "the body must be" in body["error"]
    assert thub.api("PUT", "/api/runs/r1/labels", json={"note": "", "tags": []})[0] == 200
    assert ids("tag=vip") == []
    cmp = thub.api("GET", "/api/compare?a=r1&b=r2")[1]
    assert cmp["b"]["nodeLabels"]["llm:step"]["tags"] == ["slow"]


def test_record_exports_labels_and_thread_and_import_reads_them_back(make_hub: Any, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    hub = make_hub(db=db)
    app = hub.app(app="chat-app")
    turn(app, "r1", "conv-9", "hello", "hi")
    hub.wait_for(lambda: hub.api("GET", "/api/runs")[1]["runs"], what="the run")
    hub.api("PUT", "/api/runs/r1/labels", json={"note": "good answer", "tags": ["golden"]})
    hub.api("PUT", "/api/runs/r1/nodes/llm:step/labels", json={"note": "fast"})
    hub.stop()
    out = tmp_path / "a.jsonl"
    assert main(["record", "--db", str(db), "--out", str(out)]) == 0
    run = next(json.loads(line)["run"] for line in out.read_text().splitlines() if '"type":"run"' in line)
    assert run["labels"] == {"note": "good answer", "tags": ["golden"]} and run["thread"] == "conv-9"
    assert run["nodeLabels"] == {"llm:step": {"note": "fast", "tags": []}}
    fresh = tmp_path / "b.db"
    assert main(["import", str(out), "--db", str(fresh)]) == 0
    again = tmp_path / "b.jsonl"
    assert main(["record", "--db", str(fresh), "--out", str(again)]) == 0
    assert again.read_text() == out.read_text()


def test_graphmind_diff_prints_the_labels_of_both_runs(make_hub: Any, tmp_path: Path, capsys: Any) -> None:
    db = tmp_path / "a.db"
    hub = make_hub(db=db)
    app = hub.app(app="chat-app")
    turn(app, "r1", None, "hello", "hi")
    turn(app, "r2", None, "hello", "hello!")
    hub.wait_for(lambda: len(hub.api("GET", "/api/runs")[1]["runs"]) == 2, what="the runs")
    hub.api("PUT", "/api/runs/r2/labels", json={"note": "friendlier", "tags": ["better"]})
    hub.api("PUT", "/api/runs/r1/nodes/llm:step/labels", json={"tags": ["terse"]})
    hub.stop()
    capsys.readouterr()
    assert main(["diff", "r1", "r2", "--db", str(db)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "  A labels on llm:step: tags terse" in out and '  B labels: tags better; note "friendlier"' in out


def test_the_migration_takes_the_thread_from_events_stored_before(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (0)")
    for number, steps in enumerate(MIGRATIONS[:6]):
        for step in steps:
            step(conn) if callable(step) else conn.execute(step)
        conn.execute("UPDATE schema_version SET version = ?", (number + 1,))
    conn.execute(
        "INSERT INTO runs (id, app, name, status, started_at, client_id) VALUES ('r1','a','n','finished',1,'c')"
    )
    body = json.dumps({"type": "run.started", "runId": "r1", "thread": "old-thread"})
    conn.execute(
        "INSERT INTO events (cursor, run_id, client_id, seq, type, body) VALUES (1,'r1','c',1,'run.started',?)",
        (body,),
    )
    migrate(conn, tmp_path / "old.db")
    assert conn.execute("SELECT thread FROM runs").fetchone() == ("old-thread",)
