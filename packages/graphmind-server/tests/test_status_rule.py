"""The one status rule through the hub: every case of tests/fixtures/status-golden.json, sent by a
frame-level app, gives exactly the run status and node kinds, names and statuses the fixture says in
GET /api/runs/{id}. The viewer is held to the same file (tests/browser/test_status_rule.py)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from graphmind_server.store import reads
from graphmind_server.store.items import EventItem
from graphmind_server.store.ops import Abandon
from graphmind_server.store.schema import MIGRATIONS, open_database
from graphmind_server.store.writer import Writer

FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "status-golden.json"
CASES = json.loads(FIXTURE.read_text())["cases"]


def events_of(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The case's events with "$run" replaced by its run id."""
    text = json.dumps(case["events"]).replace('"$run"', json.dumps(case["runId"]))
    return json.loads(text)  # type: ignore[no-any-return]


def send(app: Any, case: dict[str, Any], events: list[dict[str, Any]]) -> None:
    for ev in events:
        fields = {k: v for k, v in ev.items() if k != "type"}
        app.event(ev["type"], case["runId"], **fields)


def summary(hub: Any, run_id: str) -> tuple[str, dict[str, dict[str, Any]]]:
    status, run = hub.api("GET", f"/api/runs/{run_id}")
    assert status == 200, run
    nodes = {n["nodeId"]: {"kind": n["kind"], "name": n["name"], "status": n["status"]} for n in run["nodes"]}
    return run["status"], nodes


def settled(hub: Any, case: dict[str, Any], count: int) -> None:
    """Every event stored, and the run abandoned when the case says so."""

    def done() -> bool:
        status, run = hub.api("GET", f"/api/runs/{case['runId']}")
        return (
            status == 200
            and run["eventCount"] == count
            and (run["status"] == "abandoned") == bool(case.get("abandon"))
        )

    hub.wait_for(done, 10, f"case {case['name']}: {count} events stored")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_hub_gives_the_golden_statuses(make_hub: Any, case: dict[str, Any]) -> None:
    hub = make_hub(abandon_grace_ms=100)
    app = hub.app()
    events = events_of(case)
    send(app, case, events)
    if case.get("abandon"):
        app.drop()
    settled(hub, case, len(events))
    assert summary(hub, case["runId"]) == (case["run"], case["nodes"])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_same_statuses_when_the_writer_reloads_the_run_after_every_event(
    tmp_path: Path, case: dict[str, Any]
) -> None:
    # What the rule keeps of a node's executions (the latest one, the held ones) is stored with the
    # node: a hub that restarts mid-run, or a run the writer's cache let go, folds on the same.
    conn = open_database(tmp_path / "hub.db")
    writer = Writer(conn, lambda _: None)
    for seq, ev in enumerate(events_of(case), 1):
        ev = {**ev, "seq": seq, "ts": 1.7e12 + seq, "runId": case["runId"]}
        writer.write_now([EventItem("c1", "golden", ev, json.dumps(ev), ev["ts"])])
        writer.runs.clear()  # the next event loads the run and its nodes from the database
    if case.get("abandon"):
        writer._transaction([(1, Abandon("c1", 1.8e12))])
    run = reads.get_run(conn, case["runId"])
    assert run is not None
    nodes = {n["nodeId"]: {"kind": n["kind"], "name": n["name"], "status": n["status"]} for n in run["nodes"]}
    assert (run["status"], nodes) == (case["run"], case["nodes"])
    conn.close()


def test_an_abandoned_run_whose_app_comes_back_shows_its_own_statuses_again(make_hub: Any) -> None:
    case = next(c for c in CASES if c.get("abandon"))
    hub = make_hub(abandon_grace_ms=100)
    app = hub.app(client_id="late")
    events = events_of(case)
    send(app, case, events)
    app.drop()
    settled(hub, case, len(events))
    app.attach()
    step = next(e for e in events if e["type"] == "node.started" and e["nodeId"] == "llm:step")
    app.node_finished(case["runId"], "llm:step", step["instanceId"], output="late")
    hub.wait_for(
        lambda: hub.api("GET", f"/api/runs/{case['runId']}")[1]["status"] == "running", 10, "running again"
    )
    run_status, nodes = summary(hub, case["runId"])
    assert run_status == "running"
    agent = next(n for n in nodes if n.startswith("agent:"))
    assert {n: v["status"] for n, v in nodes.items()} == {
        agent: "running",
        "tool:search": "ok",
        "tool:never": "pending",
        "tool:book": "held",
        "llm:step": "ok",
    }


def test_nodes_stored_before_the_rule_kept_its_state_keep_their_status(tmp_path: Path, make_hub: Any) -> None:
    # A database of schema 1 (nodes without the rule's columns): migrated on open, its nodes keep
    # the status they had, and a new execution is derived as usual.
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version (version) VALUES (1)")
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO runs (id, app, name, status, started_at, client_id, agent_node, node_count)"
        " VALUES ('old', 'a', 'old', 'finished', ?, 'c0', 'agent:old', 2)",
        (time.time() * 1000,),  # recent: retention keeps it
    )
    conn.executemany(
        "INSERT INTO nodes (run_id, node_id, kind, name, executions, status, position) VALUES (?,?,?,?,?,?,?)",
        [("old", "agent:old", "agent", "old", 1, "ok", 0), ("old", "tool:t", "tool", "t", 1, "error", 1)],
    )
    conn.commit()
    conn.close()
    hub = make_hub(db=db)
    assert summary(hub, "old")[1]["tool:t"]["status"] == "error"
    app = hub.app()
    app.node_started("old", "tool:t", "again")
    hub.wait_for(lambda: summary(hub, "old")[1]["tool:t"]["status"] == "running", 10, "the new execution")
    app.node_finished("old", "tool:t", "again")
    hub.wait_for(lambda: summary(hub, "old")[1]["tool:t"]["status"] == "ok", 10, "it finished")
    assert summary(hub, "old")[1]["agent:old"]["status"] == "ok"


def _stored(tmp_path: Path, case: dict[str, Any]) -> tuple[sqlite3.Connection, Path]:
    """The case's events written by the hub's writer into a fresh database (abandoned if it says)."""
    db = tmp_path / "hub.db"
    conn = open_database(db)
    writer = Writer(conn, lambda _: None)
    for seq, ev in enumerate(events_of(case), 1):
        ev = {**ev, "seq": seq, "ts": 1.7e12 + seq, "runId": case["runId"]}
        writer.write_now([EventItem("c1", "golden", ev, json.dumps(ev), ev["ts"])])
    if case.get("abandon"):
        writer._transaction([(1, Abandon("c1", 1.8e12))])
    return conn, db


def _nodes(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["nodeId"]: {"kind": n["kind"], "name": n["name"], "status": n["status"]} for n in run["nodes"]}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_compare_gives_each_node_the_status_the_viewer_shows(tmp_path: Path, case: dict[str, Any]) -> None:
    # `GET /api/compare` and `graphmind diff` fold the stored events with the same rule: a node's
    # status there is its latest execution's (held while one is held), as the API and viewer say.
    from graphmind_server.compare.runs import steps

    conn, _ = _stored(tmp_path, case)
    run = reads.get_run(conn, case["runId"])
    assert run is not None
    folded: dict[str, dict[str, Any]] = {}
    for step in steps(conn, case["runId"], reads.agent_node(conn, case["runId"]), run["status"]):
        held = folded.get(step["nodeId"], {}).get("status") == "held"
        folded[step["nodeId"]] = {
            "kind": step["kind"],
            "name": step["name"],
            "status": "held" if held else step["status"],
        }
    expected = {
        node_id: node
        for node_id, node in case["nodes"].items()
        if not node_id.startswith("agent:") and node["status"] != "pending"
    }
    assert folded == expected
    conn.close()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_mcp_server_gives_the_golden_statuses(tmp_path: Path, case: dict[str, Any]) -> None:
    from graphmind_server.mcp_server.reads import Links, get_run

    conn, _ = _stored(tmp_path, case)
    run = json.loads(get_run(conn, Links(4747), case["runId"]))
    assert (run["status"], _nodes(run)) == (case["run"], case["nodes"])
    conn.close()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_an_export_imported_again_gives_the_golden_statuses(tmp_path: Path, case: dict[str, Any]) -> None:
    from graphmind_server.cli import main

    conn, db = _stored(tmp_path, case)
    conn.close()
    out = tmp_path / "run.jsonl"
    assert main(["record", "--db", str(db), "--out", str(out), "--keep-secrets"]) == 0
    fresh = tmp_path / "fresh.db"
    assert main(["import", str(out), "--db", str(fresh)]) == 0
    again = open_database(fresh)
    run = reads.get_run(again, case["runId"])
    assert run is not None
    assert (run["status"], _nodes(run)) == (case["run"], case["nodes"])
    again.close()
