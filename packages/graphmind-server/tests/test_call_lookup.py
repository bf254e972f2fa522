"""A click on a model step reads its execution by index (store/calls.py): the playground's start
and end of a call, the context X-ray's step and the step before it. Same answers as the scans of
the run's events they replace; the query plans name the indexes; an unreadable body never fails
the insert; a database of before is indexed by the migration."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from graphmind_server.context.report import ContextError, node_context
from graphmind_server.store import calls, schema
from graphmind_server.store.context import node_steps
from graphmind_server.store.importing import Import
from graphmind_server.store.items import EventItem

RUN = "r1"
NODES = ("llm:step", "llm:step@writer")


def _events() -> list[dict[str, Any]]:
    """Two model nodes and a tool, interleaved; an instanceId reused by another node; a step
    without an end; one started twice (a retry)."""
    out: list[dict[str, Any]] = [{"type": "run.started", "runId": RUN, "name": "t"}]

    def step(node: str, instance: str, n: int, *, end: bool = True) -> None:
        messages = [{"role": "user", "content": f"question {i} " * 5} for i in range(n + 1)]
        out.append(
            {"type": "node.started", "runId": RUN, "nodeId": node, "instanceId": instance, "kind": "llm",
             "name": "step", "input": {"model": "gpt-4o", "messages": messages}, "agent": "triage"}
        )  # fmt: skip
        if end:
            out.append(
                {"type": "node.finished", "runId": RUN, "nodeId": node, "instanceId": instance,
                 "output": {"content": f"answer {n}"}, "durationMs": 1.0, "usage": {"inputTokens": 10 + n}}
            )  # fmt: skip

    for i in range(12):
        step(NODES[i % 2], f"i{i}", i)
        out.append(
            {"type": "node.started", "runId": RUN, "nodeId": "tool:look", "instanceId": f"t{i}", "kind": "tool",
             "name": "look", "input": {"q": i}}
        )  # fmt: skip
        out.append(
            {"type": "node.finished", "runId": RUN, "nodeId": "tool:look", "instanceId": f"t{i}", "output": i}
        )
    step("llm:step", "i11", 99)  # i11 is llm:step@writer's too: another execution
    step("llm:step", "open", 3, end=False)
    out.append({"type": "run.finished", "runId": RUN, "status": "ok"})
    for seq, event in enumerate(out, 1):
        event.update(seq=seq, ts=1_700_000_000_000 + seq)
    return out


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "hub.db"
    schema.open_database(path).close()
    imp = Import(path)
    try:
        with imp.transaction():
            imp.write([EventItem("c1", "app", e, json.dumps(e), e["ts"]) for e in _events()])
    finally:
        imp.close()
    return path


def _scanned_execution(conn: sqlite3.Connection, instance: str) -> dict[str, Any] | None:
    """The playground's read before the index: every start and end of the run, by json_extract."""
    found: dict[str, Any] = {"started": None, "ended": None}
    for etype, body in conn.execute(
        "SELECT type, body FROM events WHERE run_id = ? AND type IN ('node.started', 'node.finished', 'node.error')"
        " AND json_valid(body) AND json_extract(body, '$.instanceId') = ? ORDER BY cursor",
        (RUN, instance),
    ):
        if etype == "node.started":
            found["started"], found["ended"] = json.loads(body), None
        else:
            found["ended"] = json.loads(body)
    return found if found["started"] is not None else None


def _scanned_context(conn: sqlite3.Connection, node: str, instance: str | None) -> tuple[str, Any]:
    """The X-ray's step and the step before it as they were read before: every step of the node."""
    steps = node_steps(conn, RUN, node)
    index = len(steps) - 1 if instance is None else [s.instance_id for s in steps].index(instance)
    before = steps[index - 1].instance_id if index > 0 else None
    return steps[index].instance_id, before


def test_the_lookups_answer_what_the_scans_did(db: Path) -> None:
    conn = sqlite3.connect(db)
    instances = [f"i{i}" for i in range(12)] + ["t3", "open", "nope"]
    for instance in instances:
        assert calls.execution(conn, RUN, instance) == _scanned_execution(conn, instance), instance
    for node in NODES:
        for instance in [None, *(s.instance_id for s in node_steps(conn, RUN, node))]:
            answer = node_context(conn, RUN, node, instance)
            want, before = _scanned_context(conn, node, instance)
            assert answer["instanceId"] == want
            previous = answer["diff"].get("previous") if before else None
            assert (previous or {}).get("instanceId") == before, (node, instance, answer["diff"])
    assert (
        node_context(conn, RUN, "llm:step", "i11")["total"]
        > node_context(conn, RUN, "llm:step@writer", "i11")["total"]
    )
    with pytest.raises(ContextError, match="no execution 'i1'"):
        node_context(conn, RUN, "llm:step", "i1")  # i1 is the other node's


def _plan(conn: sqlite3.Connection, sql: str, *args: Any) -> str:
    return " ".join(str(row[-1]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql, args))


def test_the_reads_of_a_click_are_index_searches(db: Path) -> None:
    conn = sqlite3.connect(db)
    traced: list[str] = []
    conn.set_trace_callback(traced.append)
    calls.execution(conn, RUN, "i3")
    node_context(conn, RUN, "llm:step", "i4")
    node_context(conn, RUN, "llm:step", None)
    conn.set_trace_callback(None)
    on_events = {sql for sql in traced if " FROM events " in sql}
    assert on_events
    for sql in on_events:
        plan = _plan(conn, sql)
        assert "USING INDEX events_by_instance" in plan or "USING INDEX events_by_node_start" in plan, (
            sql,
            plan,
        )


def test_an_unreadable_body_is_stored_and_skipped(db: Path) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "INSERT INTO events (run_id, client_id, seq, type, body) VALUES (?, 'c1', 999, 'node.started', ?)",
        (RUN, '{"instanceId": "i3", "x": NaN}'),
    )
    assert calls.execution(conn, RUN, "i3") == _scanned_execution(conn, "i3")


def test_the_migration_indexes_a_database_of_before(db: Path) -> None:
    migration = next(m for m in schema.MIGRATIONS if any("events_by_instance" in str(s) for s in m))
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP INDEX events_by_instance")
    conn.execute("DROP INDEX events_by_node_start")
    assert "events_by_instance" not in _plan(conn, calls.BY_INSTANCE, RUN, "i3")
    for statement in migration:
        assert isinstance(statement, str)
        conn.execute(statement)
    assert "events_by_instance" in _plan(conn, calls.BY_INSTANCE, RUN, "i3")
    assert calls.execution(conn, RUN, "i3") == _scanned_execution(conn, "i3")
