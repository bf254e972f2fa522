"""The reads the context breakdown needs (context/, docs/api.md "Context"): a run's model steps."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from .calls import NODE, STARTS, instance_events


@dataclass
class Step:
    """One execution of a model node: its start, and its end when it has one."""

    node_id: str
    instance_id: str
    seq: int
    agent: str | None
    started: dict[str, Any] = field(default_factory=dict)
    ended: dict[str, Any] | None = None


def node_kind(conn: sqlite3.Connection, run_id: str, node_id: str) -> str | None:
    row = conn.execute(
        "SELECT kind FROM nodes WHERE run_id = ? AND node_id = ?", (run_id, node_id)
    ).fetchone()
    return None if row is None else str(row[0])


def run_exists(conn: sqlite3.Connection, run_id: str) -> bool:
    return conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is not None


def node_step(conn: sqlite3.Connection, run_id: str, node_id: str, instance: str | None) -> Step | None:
    """One execution of a node (its latest start and the end after it; the node's latest execution
    without `instance`), by the indexes of store/calls.py; None when it has no recorded start."""
    if instance is None:
        row = conn.execute(
            f"SELECT body FROM events WHERE run_id = ? AND {STARTS} AND {NODE} = ? ORDER BY cursor DESC LIMIT 1",
            (run_id, node_id),
        ).fetchone()
        found = json.loads(row[0]).get("instanceId") if row else None
        if not isinstance(found, str):
            return None
        instance = found
    step, _ = _one(conn, run_id, node_id, instance)
    return step


def previous_step(conn: sqlite3.Connection, run_id: str, step: Step) -> Step | None:
    """The execution of the same node that started last before `step` first started, or None."""
    _, first = _one(conn, run_id, step.node_id, step.instance_id)
    for (body,) in conn.execute(
        f"SELECT body FROM events WHERE run_id = ? AND {STARTS} AND {NODE} = ? AND cursor < ?"
        " ORDER BY cursor DESC LIMIT 1",
        (run_id, step.node_id, first),
    ):
        instance = json.loads(body).get("instanceId")
        if isinstance(instance, str):
            return _one(conn, run_id, step.node_id, instance)[0]
    return None


def _one(conn: sqlite3.Connection, run_id: str, node_id: str, instance: str) -> tuple[Step | None, int]:
    """An execution's Step as node_steps folds it, and the cursor of its first start."""
    step: Step | None = None
    first = 0
    for cursor, seq, kind, body in instance_events(conn, run_id, instance):
        event = json.loads(body)
        if event.get("nodeId") != node_id:
            continue  # the same instanceId on another node: another execution
        if kind == "node.started":
            first = first or cursor
            agent = event.get("agent")
            step = Step(node_id, instance, seq, agent if isinstance(agent, str) else None, event)
        elif step is not None:
            step.ended = event
    return step, first


def node_steps(conn: sqlite3.Connection, run_id: str, node_id: str) -> list[Step]:
    """Every execution of one node, in the order they started, with their full events."""
    steps: dict[str, Step] = {}
    rows = conn.execute(
        "SELECT seq, type, body FROM events WHERE run_id = ? AND type IN ('node.started', 'node.finished',"
        " 'node.error') AND json_extract(body, '$.nodeId') = ? ORDER BY cursor",
        (run_id, node_id),
    )
    for seq, kind, body in rows:
        event = json.loads(body)
        instance = event.get("instanceId")
        if not isinstance(instance, str):
            continue
        if kind == "node.started":
            agent = event.get("agent")
            steps[instance] = Step(node_id, instance, seq, agent if isinstance(agent, str) else None, event)
        elif instance in steps:
            steps[instance].ended = event
    return list(steps.values())


@dataclass
class StepRow:
    """A model step as the per-step chart needs it, read without parsing the events' bodies."""

    node_id: str
    instance_id: str
    seq: int
    agent: str | None
    model: str | None
    input_tokens: int | None = None


def model_step_rows(conn: sqlite3.Connection, run_id: str) -> list[StepRow]:
    """A run's model steps in start order, with the input tokens their end reported (if any)."""
    found: dict[str, StepRow] = {}
    for node_id, instance, seq, agent, model, input_model in conn.execute(
        "SELECT json_extract(body, '$.nodeId'), json_extract(body, '$.instanceId'), seq,"
        " json_extract(body, '$.agent'), json_extract(body, '$.attrs.model'), json_extract(body, '$.input.model')"
        " FROM events WHERE run_id = ? AND type = 'node.started' AND json_extract(body, '$.kind') = 'llm'"
        " ORDER BY cursor",
        (run_id,),
    ):
        if isinstance(node_id, str) and isinstance(instance, str):
            name = (
                model
                if isinstance(model, str) and model
                else input_model
                if isinstance(input_model, str)
                else None
            )
            found[f"{node_id}\0{instance}"] = StepRow(
                node_id, instance, seq, agent if isinstance(agent, str) else None, name
            )
    for node_id, instance, tokens in conn.execute(
        "SELECT json_extract(body, '$.nodeId'), json_extract(body, '$.instanceId'),"
        " json_extract(body, '$.usage.inputTokens') FROM events WHERE run_id = ? AND type = 'node.finished'"
        " AND json_extract(body, '$.usage.inputTokens') IS NOT NULL",
        (run_id,),
    ):
        row = found.get(f"{node_id}\0{instance}")
        if row is not None and type(tokens) is int and tokens >= 0:
            row.input_tokens = tokens
    return list(found.values())
