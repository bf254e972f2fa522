"""Threads: the conversation or session a run is one turn of (docs/protocol.md, `run.started`).

A run's thread is kept on its row (`runs.thread`, indexed); the thread view reads a thread's runs,
oldest first, each with the input of its first model call and the output of its last: what was
asked that turn and what was answered.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

MAX_THREAD_CHARS = 200  # as core cuts it (graphmind/_runs/thread.py); a longer one from elsewhere too

# The column, filled for runs stored before from their run.started (an app sent `thread` before a hub
# kept it: the event was stored as sent), and the index the `thread=` filter and the thread view use.
MIGRATION: list[str] = [
    "ALTER TABLE runs ADD COLUMN thread TEXT",
    "UPDATE runs SET thread = (SELECT substr(trim(json_extract(e.body, '$.thread')), 1, 200) FROM events e"
    " WHERE e.run_id = runs.id AND e.type = 'run.started' AND json_valid(e.body)"
    " AND json_type(e.body, '$.thread') = 'text' ORDER BY e.cursor DESC LIMIT 1)",
    "UPDATE runs SET thread = NULL WHERE thread = ''",
    "CREATE INDEX runs_by_thread ON runs (thread, started_at) WHERE thread IS NOT NULL",
]


def thread_of(event: dict[str, Any]) -> str | None:
    """A run.started's thread: a non-empty string, cut at MAX_THREAD_CHARS; None otherwise."""
    value = event.get("thread")
    if not isinstance(value, str):
        return None
    return value.strip()[:MAX_THREAD_CHARS] or None


def list_threads(conn: sqlite3.Connection, app: str | None, limit: int) -> list[dict[str, Any]]:
    """Threads, the one with the newest run first: its id, apps, run count, first and last start."""
    where, args = ("WHERE thread IS NOT NULL AND app = ?", [app]) if app else ("WHERE thread IS NOT NULL", [])
    rows = conn.execute(
        f"""SELECT thread, group_concat(DISTINCT app), COUNT(*), MIN(started_at), MAX(started_at)
            FROM runs {where} GROUP BY thread ORDER BY MAX(received_at) DESC LIMIT ?""",
        (*args, limit),
    ).fetchall()
    return [
        {
            "thread": r[0],
            "apps": sorted(set((r[1] or "").split(","))),
            "runs": r[2],
            "firstAt": r[3],
            "lastAt": r[4],
        }
        for r in rows
    ]


def _body(row: tuple[Any, ...] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    try:
        value = json.loads(row[0])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def turns(
    conn: sqlite3.Connection,
    thread: str,
    columns: str,
    to_api: Callable[[tuple[Any, ...]], dict[str, Any]],
    limit: int,
) -> list[dict[str, Any]]:
    """A thread's runs, oldest first (the newest `limit`), each a Run object with `turn`: the input of
    its first model call and the output of its last (null when it made none)."""
    rows = conn.execute(
        f"SELECT {columns} FROM runs WHERE thread = ? ORDER BY started_at DESC, rowid DESC LIMIT ?",
        (thread, limit),
    ).fetchall()
    out = []
    for row in reversed(rows):
        run = to_api(row)
        first = _body(
            conn.execute(
                "SELECT body FROM events WHERE run_id = ? AND type = 'node.started' AND json_valid(body)"
                " AND json_extract(body, '$.kind') = 'llm' ORDER BY seq LIMIT 1",
                (run["id"],),
            ).fetchone()
        )
        last = _body(
            conn.execute(
                "SELECT body FROM events WHERE run_id = ? AND type = 'node.finished' AND json_valid(body)"
                " AND json_extract(body, '$.nodeId') IN (SELECT node_id FROM nodes WHERE run_id = ? AND kind = 'llm')"
                " ORDER BY seq DESC LIMIT 1",
                (run["id"], run["id"]),
            ).fetchone()
        )
        run["turn"] = {
            "input": first.get("input") if first else None,
            "inputNode": first.get("nodeId") if first else None,
            "output": last.get("output") if last else None,
            "outputNode": last.get("nodeId") if last else None,
        }
        out.append(run)
    return out
