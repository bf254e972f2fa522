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

    def summary(self, when: str = "at start-up") -> str | None:
        """The one line to print, None when nothing went."""
        if not self.runs:
            return None
        why = []
        if self.over_count:
            why.append(f"{self.over_count} beyond the newest {self.keep_runs} (--keep)")
        if self.too_old:
            why.append(f"{self.too_old} received more than {self.keep_days} day(s) ago (--days)")
        return (
            f"graphmind: pruned {self.runs} run(s) and their {self.events} event(s) {when}: "
            f"{'; '.join(why)}. Raise --keep / --days, or set GRAPHMIND_RETENTION=off to keep everything"
        )


# A prune of more events than this is not done before the hub listens: a year of runs pruned by
# half (500,000 events) kept the hub from listening for minutes, and every app's ring overflowed
# meanwhile (bench/year_of_runs.py). It goes on once the hub listens, PRUNE_CHUNK_EVENTS at a time,
# each chunk one writer transaction between the apps' events (`Prune`, store/ops.py).
PRUNE_BEFORE_LISTEN_EVENTS = 20_000
PRUNE_CHUNK_EVENTS = 2_000


@dataclass(frozen=True)
class Plan:
    """What the limits say should go: (run id, its event count) in order, and how many are too old."""

    doomed: list[tuple[str, int]]
    too_old: int
    keep_runs: int
    keep_days: int

    @property
    def events(self) -> int:
        return sum(n for _, n in self.doomed)

    def chunks(self, events: int = PRUNE_CHUNK_EVENTS) -> list[list[str]]:
        """The run ids in groups of about `events` events (a bigger run is a group of its own)."""
        out: list[list[str]] = []
        size = events
        for run_id, count in self.doomed:
            if size + count > events:
                out.append([])
                size = 0
            out[-1].append(run_id)
            size += count
        return out

    def pruned(self) -> Pruned:
        return Pruned(
            len(self.doomed) - self.too_old, self.too_old, self.events, self.keep_runs, self.keep_days
        )


def plan(conn: sqlite3.Connection, *, keep_runs: int, keep_days: int, now_ms: float) -> Plan:
    """What a prune now would delete, by the hub's receive time (reads only)."""
    cutoff = now_ms - keep_days * DAY_MS
    rows = conn.execute(
        """SELECT id, event_count, received_at < ? FROM runs WHERE status != 'running' AND (
           received_at < ?
           OR id NOT IN (SELECT id FROM runs ORDER BY received_at DESC, rowid DESC LIMIT ?))""",
        (cutoff, cutoff, keep_runs),
    ).fetchall()
    return Plan([(r[0], r[1]) for r in rows], sum(1 for r in rows if r[2]), keep_runs, keep_days)


def delete_runs(conn: sqlite3.Connection, run_ids: list[str]) -> int:
    """Deletes these runs and everything of them (inside the caller's transaction); the events gone."""
    events = 0
    nodestats.forget_runs(conn, run_ids)  # and their hours summed again, once for all of them
    for run_id in run_ids:
        events += conn.execute("SELECT COUNT(*) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
        search.forget_run(conn, run_id)
        conn.execute("DELETE FROM events WHERE run_id = ?", (run_id,))
        conn.execute("DELETE FROM once_keys WHERE run_id = ?", (run_id,))
        conn.execute("DELETE FROM proposals WHERE run_id = ?", (run_id,))
        conn.execute("DELETE FROM nodes WHERE run_id = ?", (run_id,))
        conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
    return events


def prune(conn: sqlite3.Connection, *, keep_runs: int, keep_days: int, now_ms: float) -> Pruned:
    """Delete what the limits say in one transaction, by the hub's receive time; says what went."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        doomed = plan(conn, keep_runs=keep_runs, keep_days=keep_days, now_ms=now_ms)
        events = delete_runs(conn, [run_id for run_id, _ in doomed.doomed])
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return Pruned(len(doomed.doomed) - doomed.too_old, doomed.too_old, events, keep_runs, keep_days)
