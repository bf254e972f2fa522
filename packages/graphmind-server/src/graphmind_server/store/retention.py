"""The start-up prune: keep the newest N runs, drop runs older than D days, never a running one."""

from __future__ import annotations

import sqlite3

from . import search

DAY_MS = 86_400_000


def prune(conn: sqlite3.Connection, *, keep_runs: int, keep_days: int, now_ms: float) -> int:
    """Delete what the limits say in one transaction; returns the number of runs deleted."""
    cutoff = now_ms - keep_days * DAY_MS
    conn.execute("BEGIN IMMEDIATE")
    try:
        doomed = [
            r[0]
            for r in conn.execute(
                """SELECT id FROM runs WHERE status != 'running' AND (
                   started_at < ?
                   OR id NOT IN (SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?))""",
                (cutoff, keep_runs),
            )
        ]
        for run_id in doomed:
            search.forget_run(conn, run_id)
            conn.execute("DELETE FROM events WHERE run_id = ?", (run_id,))
            conn.execute("DELETE FROM once_keys WHERE run_id = ?", (run_id,))
            conn.execute("DELETE FROM nodes WHERE run_id = ?", (run_id,))
            conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(doomed)
