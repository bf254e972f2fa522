"""A run's row and its nodes' rows in SQL: loaded into the writer's cache, and written back (upserts)
with the search facets they gained. Only the writer calls these, inside its transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from . import nodestats, search
from .derive import NODE_COLUMNS, NodeRow, RunRow

_RUN_COLUMNS = (
    "id, app, name, status, started_at, ended_at, event_count, client_id, meta, implicit, agent_node, cursor,"
    " dropped, usage, held_ms, abandoned_reason, received_at, thread"
)
_UPSERT_RUN = f"""INSERT INTO runs ({_RUN_COLUMNS}, node_count) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
ON CONFLICT(id) DO UPDATE SET app=excluded.app, name=excluded.name, status=excluded.status,
started_at=excluded.started_at, ended_at=excluded.ended_at, event_count=excluded.event_count,
meta=excluded.meta, implicit=excluded.implicit, agent_node=excluded.agent_node, cursor=excluded.cursor,
node_count=excluded.node_count, dropped=excluded.dropped, usage=excluded.usage, held_ms=excluded.held_ms,
abandoned_reason=excluded.abandoned_reason, received_at=excluded.received_at, thread=excluded.thread"""
_UPSERT_NODE = f"""INSERT INTO nodes (run_id, {NODE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)
ON CONFLICT(run_id, node_id) DO UPDATE SET kind=excluded.kind, name=excluded.name,
executions=excluded.executions, status=excluded.status, latest=excluded.latest,
latest_status=excluded.latest_status, held=excluded.held"""


def load_run(conn: sqlite3.Connection, run_id: str) -> RunRow | None:
    """The run's row with its nodes, None if the database has no such run."""
    row = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
    if row is None:
        return None
    run = RunRow.from_db(row)
    for n in conn.execute(f"SELECT {NODE_COLUMNS} FROM nodes WHERE run_id = ? ORDER BY position", (run_id,)):
        assert run.nodes is not None
        run.nodes[n[0]] = NodeRow.from_db(n)
    return run


def write_runs(conn: sqlite3.Connection, runs: Iterable[RunRow]) -> None:
    """Upserts each run, its changed nodes and its new facets; the runs are then clean."""
    run_rows = []
    node_rows = []
    facet_rows: list[tuple[str, str]] = []
    stat_rows: list[tuple[Any, ...]] = []
    for run in runs:
        run_rows.append(
            (
                run.id,
                run.app,
                run.name,
                run.status,
                run.started_at,
                run.ended_at,
                run.event_count,
                run.client_id,
                run.meta,
                int(run.implicit),
                run.agent_node,
                run.cursor,
                run.dropped,
                run.usage,
                run.held_ms,
                run.abandoned_reason,
                run.received_at,
                run.thread,
                run.node_count,
            )
        )
        facet_rows.extend((f, run.id) for f in run.new_facets)
        run.new_facets.clear()
        stat_rows += run.new_stats
        run.new_stats.clear()
        for node_id in run.dirty_nodes:
            assert run.nodes is not None
            node_rows.append(run.nodes[node_id].to_db(run.id))
        run.dirty_nodes.clear()
        run.new = False
    conn.executemany(_UPSERT_RUN, run_rows)
    if node_rows:
        conn.executemany(_UPSERT_NODE, node_rows)
    if facet_rows:
        conn.executemany(search.FACET_SQL, facet_rows)
    nodestats.write(conn, stat_rows)
