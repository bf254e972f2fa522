"""The start-up prune: keep the newest N runs, drop runs older than D days, never a running one.

"Newest" and "older" are the hub's own clock: when it first stored anything of the run
(`received_at`), never the app's `startedAt`. With `--keep 5`, five spans dated 2200 once made the
next start-up delete the run of the day (and a span dated 1970 would be deleted at the next start by
`--days`). What a prune removed is said in one line (`summary`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from . import nodestats, search

DAY_MS = 86_400_000


@dataclass(frozen=True)
class Pruned:
    """What a prune deleted: runs beyond the newest `keep_runs`, and runs older than `keep_days`."""

    over_count: int = 0
    too_old: int = 0
    events: int = 0
    keep_runs: int = 0
    keep_days: int = 0

    @property
    def runs(self) -> int:
        return self.over_count + self.too_old

    def summary(self) -> str | None:
        """The one line to print, None when nothing went."""
        if not self.runs:
            return None
        why = []
        if self.over_count:
            why.append(f"{self.over_count} beyond the newest {self.keep_runs} (--keep)")
        if self.too_old:
            why.append(f"{self.too_old} received more than {self.keep_days} day(s) ago (--days)")
        return (
            f"graphmind: pruned {self.runs} run(s) and their {self.events} event(s) at start-up: "
            f"{'; '.join(why)}. Raise --keep / --days, or set GRAPHMIND_RETENTION=off to keep everything"
        )


def prune(conn: sqlite3.Connection, *, keep_runs: int, keep_days: int, now_ms: float) -> Pruned:
    """Delete what the limits say in one transaction, by the hub's receive time; says what went."""
    cutoff = now_ms - keep_days * DAY_MS
    conn.execute("BEGIN IMMEDIATE")
    try:
        rows = conn.execute(
            """SELECT id, received_at < ? FROM runs WHERE status != 'running' AND (
               received_at < ?
               OR id NOT IN (SELECT id FROM runs ORDER BY received_at DESC, rowid DESC LIMIT ?))""",
            (cutoff, cutoff, keep_runs),
        ).fetchall()
        doomed = [r[0] for r in rows]
        too_old = sum(1 for r in rows if r[1])
        events = 0
        for run_id in doomed:
            events += conn.execute("SELECT COUNT(*) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
            search.forget_run(conn, run_id)
            nodestats.forget_run(conn, run_id)
            conn.execute("DELETE FROM events WHERE run_id = ?", (run_id,))
            conn.execute("DELETE FROM once_keys WHERE run_id = ?", (run_id,))
            conn.execute("DELETE FROM proposals WHERE run_id = ?", (run_id,))
            conn.execute("DELETE FROM nodes WHERE run_id = ?", (run_id,))
            conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return Pruned(len(doomed) - too_old, too_old, events, keep_runs, keep_days)
