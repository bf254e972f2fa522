"""One row per ended node execution (`node_stats`): what the trends page sums and ranks by SQL
alone (store/trends.py), so a request never parses an event's JSON.

A row is written when a `node.finished` or `node.error` is stored: its app, kind, name, model
(the rule of store/usage.py), when it started (the end event's `ts` less its `durationMs`), how
long it ran (`durationMs` less `heldMs`: a held gate is the person's time, not the call's), its
tokens and the cost the framework reported (NULL: priced from the table when read, as a run's is).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from . import hourly
from .usage import _CACHED_KEYS, _cost, _count, answered_model, load, started_model

COLUMNS = (
    "run_id, instance_id, node_id, kind, name, model, app, started_at, duration_ms, status,"
    " input_tokens, output_tokens, cached_tokens, cost_usd"
)
UPSERT = f"INSERT OR REPLACE INTO node_stats ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"

# Migration: the table and the indexes the trends queries range over (a time range, then a group).
MIGRATION = [
    """CREATE TABLE node_stats (
        run_id TEXT NOT NULL,
        instance_id TEXT NOT NULL,
        node_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        model TEXT,
        app TEXT NOT NULL,
        started_at REAL NOT NULL,
        duration_ms REAL,
        status TEXT NOT NULL,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL
    )""",
    # A rowid table: rows lie in the order they ended (about time order), so a range read by the
    # time index fetches neighbouring pages; the unique key is what a re-sent end replaces.
    "CREATE UNIQUE INDEX node_stats_key ON node_stats (run_id, instance_id)",
    # Every column the trends read, by time: a range is read from this index alone (about half the
    # time of the table rows fetched one by one, on 20,000 runs).
    "CREATE INDEX node_stats_by_time ON node_stats (started_at, kind, model, name, app, status, duration_ms,"
    " input_tokens, output_tokens, cached_tokens, cost_usd)",
    # the trends page's run-level series range over the runs' start
    "CREATE INDEX runs_by_app_start ON runs (app, started_at)",
]


def _ms(value: Any) -> float | None:
    if type(value) in (int, float) and value == value and 0 <= value < float("inf"):
        return float(value)
    return None


def row(
    run_id: str,
    app: str,
    node: tuple[str, str, str],
    event: dict[str, Any],
    ts: float,
    model: str | None,
    usage: Any,
) -> tuple[Any, ...]:
    """The node_stats row of one `node.finished` / `node.error` (`node`: nodeId, kind, name)."""
    node_id, kind, name = node
    duration = _ms(event.get("durationMs"))
    held = _ms(event.get("heldMs")) or 0.0
    ran = None if duration is None else max(0.0, duration - held)
    u = usage if isinstance(usage, dict) else {}
    cached = next((_count(u.get(k)) for k in _CACHED_KEYS if _count(u.get(k))), 0)
    instance = event.get("instanceId")
    return (
        run_id,
        instance if isinstance(instance, str) else "",
        node_id,
        kind,
        name,
        model,
        app,
        ts - (duration or 0.0),
        ran,
        "error" if event.get("type") == "node.error" else "ok",
        _count(u.get("inputTokens")),
        _count(u.get("outputTokens")),
        cached,
        _cost(u.get("costUsd")),
    )


def write(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Store the rows and sum them into their hours (store/hourly.py), in the caller's transaction."""
    if not rows:
        return
    again = _replaced_hours(conn, rows)
    conn.executemany(UPSERT, rows)
    hourly.add(conn, [r for r in rows if hourly.hour_of(r[7]) not in again])
    hourly.rebuild(conn, again)


_CHUNK = 400  # keys per look-up (two parameters each)


def _replaced_hours(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> set[int]:
    """The hours of the rows these replace (a re-sent end: the same run and instance), the old
    row's and the new one's: summed again from node_stats, as a row cannot be taken out of a
    bin's largest value."""
    by_key: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        by_key.setdefault((r[0], r[1]), []).append(r[7])
    keys = list(by_key)
    times = [t for ts in by_key.values() if len(ts) > 1 for t in ts]  # twice in this batch
    for i in range(0, len(keys), _CHUNK):
        chunk = keys[i : i + _CHUNK]
        values = ",".join("(?,?)" for _ in chunk)
        for run_id, instance, old in conn.execute(
            f"SELECT n.run_id, n.instance_id, n.started_at FROM (VALUES {values}) AS v"
            " JOIN node_stats n ON n.run_id = v.column1 AND n.instance_id = v.column2",
            [part for key in chunk for part in key],
        ):
            times += [old, *by_key[(run_id, instance)]]
    return {h for t in times if (h := hourly.hour_of(t)) is not None}


def forget_runs(conn: sqlite3.Connection, run_ids: list[str]) -> None:
    """Delete these runs' rows and sum their hours again (store/retention.py)."""
    hours: set[int] = set()
    for run_id in run_ids:
        for (t,) in conn.execute("SELECT started_at FROM node_stats WHERE run_id = ?", (run_id,)):
            if (h := hourly.hour_of(t)) is not None:
                hours.add(h)
        conn.execute("DELETE FROM node_stats WHERE run_id = ?", (run_id,))
    hourly.rebuild(conn, hours)


def backfill(conn: sqlite3.Connection) -> None:
    """The migration: rows for the executions stored before it, from their events."""
    text = "CASE WHEN json_type(body, '{0}') = 'text' THEN json_extract(body, '{0}') END"
    apps = dict(conn.execute("SELECT id, app FROM runs").fetchall())
    started: dict[tuple[str, str], str | None] = {}
    out: list[tuple[Any, ...]] = []
    for (
        run_id,
        etype,
        body_ts,
        instance,
        node_id,
        kind,
        name,
        attrs_model,
        input_model,
        output_model,
        rest,
    ) in conn.execute(
        "SELECT run_id, type, json_extract(body, '$.ts'), json_extract(body, '$.instanceId'),"
        " json_extract(body, '$.nodeId'), json_extract(body, '$.kind'), json_extract(body, '$.name'),"
        f" {text.format('$.attrs.model')}, {text.format('$.input.model')}, {text.format('$.output.model')},"
        " json_object('durationMs', json_extract(body, '$.durationMs'), 'heldMs', json_extract(body, '$.heldMs'),"
        " 'usage', json_extract(body, '$.usage'), 'cost', json_extract(body, '$.cost.total'))"
        " FROM events WHERE type IN ('node.started', 'node.finished', 'node.error') AND json_valid(body)"
        " ORDER BY cursor"
    ):
        if not isinstance(instance, str) or not isinstance(node_id, str):
            continue
        if etype == "node.started":
            started[(run_id, instance)] = started_model(
                {"kind": kind, "attrs": {"model": attrs_model}, "input": {"model": input_model}}
            )
            continue
        known = conn.execute(
            "SELECT kind, name FROM nodes WHERE run_id = ? AND node_id = ?", (run_id, node_id)
        ).fetchone()
        extra = load(rest)
        usage = load(extra.get("usage")) if isinstance(extra.get("usage"), str) else extra.get("usage")
        if extra.get("cost") is not None:
            usage = {**(usage if isinstance(usage, dict) else {}), "costUsd": extra["cost"]}
        model = started.pop((run_id, instance), None) or answered_model({"output": {"model": output_model}})
        event = {"type": etype, "instanceId": instance, **extra}
        ts = float(body_ts) if type(body_ts) in (int, float) else 0.0
        node = (node_id, *(known or (kind or "node", name or node_id)))
        out.append(row(run_id, apps.get(run_id, ""), node, event, ts, model, usage))
    if out:  # the rows alone: their hours are summed by a later migration (store/hourly.py)
        conn.executemany(UPSERT, out)
