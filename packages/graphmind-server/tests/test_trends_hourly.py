"""The hourly summary (store/hourly.py): the trends read from it equal the trends read from every
node_stats row, after writes, a re-sent end, a delete and a prune, by hour and by day, in time zones
of whole and of part hours, for an app and for all, by each group."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from graphmind_server.store import hourly, nodestats, retention
from graphmind_server.store.schema import MIGRATIONS, migrate
from graphmind_server.store.trends import GROUPS, TrendQuery, trends
from graphmind_server.testing.generate import Generated, generate_runs

H = hourly.HOUR_MS
TZS = (0, -300, 330, 345)


def _summary(conn: sqlite3.Connection) -> list[Any]:
    """Both tables' rows, in order (a cost to 9 decimals: summed in another order it may differ in
    its last bit)."""
    rows = conn.execute("SELECT * FROM node_hourly ORDER BY hour, app, model, tool").fetchall()
    ms = conn.execute("SELECT * FROM node_hourly_ms ORDER BY span, hour, app, model, tool, bin").fetchall()
    return [(*r[:8], round(r[8], 9), *r[9:]) for r in rows] + ms


def _as_built_from_scratch(conn: sqlite3.Connection) -> None:
    """The summary kept along the way is the one the migration builds from node_stats now."""
    kept = _summary(conn)
    conn.execute("BEGIN")
    conn.execute("DELETE FROM node_hourly")
    conn.execute("DELETE FROM node_hourly_ms")
    hourly.backfill(conn)
    built = _summary(conn)
    conn.execute("ROLLBACK")
    assert kept == built


def _same(conn: sqlite3.Connection, made: Generated) -> int:
    """Every query's answer from the summary is the one from node_stats alone; how many compared."""
    since, until = made.since_ms, made.until_ms
    ranges = [
        (since - 1, until + 1),
        (since + 1_234_567.5, since + 1.7 * 86_400_000 + 89),
        (since, since + 2 * H),
    ]
    checked = 0
    for group in GROUPS:
        for bucket in ("hour", "day"):
            for tz in TZS:
                for app in (None, made.apps[1]):
                    # and 60 days either side for days: the latency's 30-day blocks read too
                    wide = [(since - 60 * 86_400_000, until + 60 * 86_400_000)] if bucket == "day" else []
                    for lo, hi in ranges + wide:
                        q = TrendQuery(lo, hi, group, bucket, tz, app)
                        fast, slow = trends(conn, q), trends(conn, q, summary=False)
                        assert fast == slow, q
                        checked += bool(slow["groups"])
    return checked


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Generated]:
    db = tmp_path_factory.mktemp("hourly") / "g.db"
    return db, generate_runs(db, runs=240, apps=3, models=4, days=3, seed=5)


def test_the_summary_equals_node_stats_after_writes_a_resend_a_delete_and_a_prune(
    made: tuple[Path, Generated],
) -> None:
    db, gen = made
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        assert conn.execute("SELECT COUNT(*) FROM node_hourly").fetchone()[0] > 40
        assert _same(conn, gen) == 168
        _as_built_from_scratch(conn)

        # a re-sent end: the same run and instance, now an hour later, slower and failed; and one
        # sent twice within one write
        rows = conn.execute(
            f"SELECT {nodestats.COLUMNS} FROM node_stats WHERE kind = 'tool' LIMIT 3"
        ).fetchall()
        again = [(*r[:7], r[7] + H, (r[8] or 0) * 7 + 1, "error", *r[10:]) for r in rows]
        conn.execute("BEGIN")
        nodestats.write(conn, [again[0], again[1], (*again[1][:8], 5.0, *again[1][9:])])
        conn.execute("COMMIT")
        assert conn.execute("SELECT COUNT(*) FROM node_stats WHERE duration_ms = 5.0").fetchone()[0] == 1
        _as_built_from_scratch(conn)
        assert _same(conn, gen) == 168

        # a delete, then a prune to the newest 150 runs
        doomed = [r for (r,) in conn.execute("SELECT id FROM runs ORDER BY started_at LIMIT 40 OFFSET 60")]
        conn.execute("BEGIN")
        retention.delete_runs(conn, doomed)
        conn.execute("COMMIT")
        _as_built_from_scratch(conn)
        assert _same(conn, gen) == 168
        pruned = retention.prune(conn, keep_runs=150, keep_days=3650, now_ms=gen.until_ms)
        assert pruned.runs == 50
        _as_built_from_scratch(conn)
        assert _same(conn, gen) > 100  # the oldest runs gone: some ranges hold nothing now
    finally:
        conn.close()


def test_calls_dated_before_1970_or_far_ahead_are_read_from_node_stats(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    gen = generate_runs(db, runs=3, apps=1, models=1, days=1)
    conn = sqlite3.connect(db, isolation_level=None)
    row = conn.execute(f"SELECT {nodestats.COLUMNS} FROM node_stats WHERE model IS NOT NULL").fetchone()
    odd = [
        (row[0], f"odd{i}", *row[2:7], t, 1e30 if i == 0 else 12.5, *row[9:])
        for i, t in enumerate([-5e6, 0.0, 3e17])
    ]
    conn.execute("BEGIN")
    nodestats.write(conn, odd)
    conn.execute("COMMIT")
    _as_built_from_scratch(conn)
    for tz in TZS:
        for lo, hi in [(-1e7, gen.until_ms), (-1e7, 4e17), (-5e6, 1.0)]:
            q = TrendQuery(lo, hi, "model", "day", tz)
            assert trends(conn, q) == trends(conn, q, summary=False)
    conn.close()


def test_the_migration_sums_the_calls_stored_before(made: tuple[Path, Generated], tmp_path: Path) -> None:
    db = tmp_path / "copy.db"
    with sqlite3.connect(made[0]) as src, sqlite3.connect(db) as dst:
        src.backup(dst)
    conn = sqlite3.connect(db, isolation_level=None)
    kept = _summary(conn)
    # as a database from before the summary: its migration (found by what it runs) not yet run
    number = next(i for i, steps in enumerate(MIGRATIONS) if hourly.backfill in steps)
    for steps in MIGRATIONS[number:]:
        for step in steps:
            table = re.match(r"\s*CREATE TABLE (\w+)", step) if isinstance(step, str) else None
            if table:
                conn.execute(f"DROP TABLE {table.group(1)}")
    conn.execute("UPDATE schema_version SET version = ?", (number,))
    migrate(conn, db)
    assert _summary(conn) == kept
    conn.close()
