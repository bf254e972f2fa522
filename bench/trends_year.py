"""The trends page over a year of calls: `GET /api/trends`' store query on a database of 1.5 million
model and tool calls, read from every node_stats row (as before the hourly summary) and from the
summary (store/hourly.py), for the newest 30 days and the whole year, by model, tool and app.

    uv run python bench/trends_year.py                      # 1.5M calls over 365 days, a temp file
    uv run python bench/trends_year.py --db t.db --keep-db  # keep the file (a second run reuses it)
    uv run python bench/trends_year.py --calls 300000       # a quick figure

- **The fill** writes only what the trends read: `runs` rows and their `node_stats` rows (no events,
  no prompts: bench/year_of_runs.py fills those, at ~2,000 events/s). Runs of `--calls-per-run`
  calls on average (1 to twice that), started at random over the year, 5 apps, 8 models, 6 tools;
  a model call ~700 ms (log-normal), a tool call ~90 ms, one tool call in 25 fails; one model in 8
  reports its cost, the rest are priced from the table. Then the summary is filled by its
  migration's own step (`hourly.backfill`), timed: what a hub's first start on such a file waits.
- **The reads**: `store.trends.trends` on one connection, as the hub's read pool runs it (the HTTP
  layer adds a JSON dump of a few kB); each timed `--repeat` times, the median and the max given,
  with the load average and the CPU time (what the load cannot stretch). The viewer's offset is +60 min (a whole hour) and +330 min (India: each
  day's first hour is read from node_stats).
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from year_of_runs import APPS, MODELS, TOOLS  # the same apps, models and tools as the year's runs

from graphmind_server.store import hourly, nodestats
from graphmind_server.store.schema import open_database
from graphmind_server.store.trends import TrendQuery, trends

DAY_MS = 86_400_000.0
_RUN = (
    "INSERT INTO runs (id, app, name, status, started_at, ended_at, client_id, received_at)"
    " VALUES (?,?,?,?,?,?,?,?)"
)


def fill(conn: sqlite3.Connection, calls: int, per_run: int, now: float, seed: int) -> tuple[int, int]:
    """(runs, calls) written: runs rows and node_stats rows only, the summary left empty."""
    rng = random.Random(seed)
    since = now - 365 * DAY_MS
    made = runs = 0
    conn.execute("BEGIN")
    stats: list[tuple[Any, ...]] = []
    run_rows: list[tuple[Any, ...]] = []
    while made < calls:
        run_id = f"run-{runs:07d}"
        app = rng.choice(APPS)
        start = rng.uniform(since, now - 3_600_000)
        t, failed = start + rng.uniform(5, 50), False
        for i in range(min(rng.randint(1, 2 * per_run - 1), calls - made)):
            if i % 2 == 0:
                model = rng.choice(MODELS)
                took = rng.lognormvariate(6.5, 0.6)
                tin, tout = rng.randint(200, 4000), rng.randint(20, 800)
                cost = round((tin + tout) * 7e-7, 8) if model == MODELS[5] else None
                stats.append(
                    (
                        run_id,
                        f"i{i}",
                        "llm:step",
                        "llm",
                        "chat",
                        model,
                        app,
                        t,
                        took,
                        "ok",
                        tin,
                        tout,
                        0,
                        cost,
                    )
                )
            else:
                took = rng.lognormvariate(4.5, 0.8)
                bad = rng.random() < 0.04
                failed = failed or bad
                tool = rng.choice(TOOLS)
                outcome = "error" if bad else "ok"
                stats.append(
                    (
                        run_id,
                        f"i{i}",
                        f"tool:{tool}",
                        "tool",
                        tool,
                        None,
                        app,
                        t,
                        took,
                        outcome,
                        0,
                        0,
                        0,
                        None,
                    )
                )
            t += took + rng.uniform(1, 30)
            made += 1
        run_rows.append(
            (run_id, app, f"{app} turn", "error" if failed else "finished", start, t + 1, "bench", t)
        )
        runs += 1
        if len(stats) >= 50_000:
            conn.executemany(nodestats.UPSERT, stats)
            conn.executemany(_RUN, run_rows)
            stats, run_rows = [], []
    conn.executemany(nodestats.UPSERT, stats)
    conn.executemany(_RUN, run_rows)
    conn.execute("COMMIT")
    return runs, made


def timed(fn: Any, repeat: int) -> tuple[float, float, float]:
    """(median, max) wall ms and the median CPU ms of this process (what the load cannot stretch)."""
    took, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        took.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return statistics.median(took), max(took), statistics.median(cpu)


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, help="the database file (default: a temporary one)")
    ap.add_argument("--keep-db", action="store_true", help="keep the file; a second run reuses it")
    ap.add_argument("--calls", type=int, default=1_500_000, help="model and tool calls over the year")
    ap.add_argument("--calls-per-run", type=int, default=40, help="calls in a run, on average")
    ap.add_argument("--repeat", type=int, default=3, help="times each read is timed")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tmp = None
    if args.db is None:
        tmp = tempfile.TemporaryDirectory(prefix="trends-year-")
        args.db = Path(tmp.name) / "year.db"
    try:
        reuse = args.db.exists()
        conn = open_database(args.db)
        now = time.time() * 1000.0
        if reuse and conn.execute("SELECT COUNT(*) FROM node_stats").fetchone()[0]:
            now = conn.execute("SELECT MAX(started_at) FROM node_stats").fetchone()[0] + 3_600_000
            print(f"reusing {args.db}")
        else:
            t0 = time.perf_counter()
            runs, calls = fill(conn, args.calls, args.calls_per_run, now, args.seed)
            print(f"fill: {runs:,} runs, {calls:,} calls in {time.perf_counter() - t0:.1f} s (load {load()})")
        # the summary made again by its migration's statements (as a hub's first start on the file)
        conn.execute("BEGIN")
        conn.execute("DROP TABLE IF EXISTS node_hourly")
        conn.execute("DROP TABLE IF EXISTS node_hourly_ms")
        t0, c0 = time.perf_counter(), time.process_time()
        for step in hourly.MIGRATION:
            conn.execute(step)
        hourly.backfill(conn)
        conn.execute("COMMIT")
        took, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"the summary's migration: {took:.1f} s, {cpu:.1f} s of CPU (load {load()})")
        counts = [conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "node_stats")]
        sums = [
            conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("node_hourly", "node_hourly_ms")
        ]
        print(
            f"{counts[0]:,} runs, {counts[1]:,} calls; summary rows: {sums[0]:,} sums, {sums[1]:,} latency bins"
        )
        month = conn.execute("SELECT COUNT(*) FROM node_stats WHERE started_at >= ?", (now - 30 * DAY_MS,))
        print(f"the newest 30 days: {month.fetchone()[0]:,} calls")
        print(
            "| range | group | tz | from node_stats (before): median / max, CPU | from the summary (after) | load |"
        )
        print("|---|---|---|---|---|---|")
        for name, days in (("30 days", 30), ("365 days", 365)):
            for group in ("model", "tool", "app"):
                for tz in (60, 330):
                    q = TrendQuery(now - days * DAY_MS, now, group, None, tz)
                    before = timed(lambda q=q: trends(conn, q, summary=False), args.repeat)
                    after = timed(lambda q=q: trends(conn, q), args.repeat)
                    assert trends(conn, q) == trends(conn, q, summary=False), q
                    print(
                        f"| {name} | {group} | +{tz} min | {before[0]:,.0f} / {before[1]:,.0f} ms, {before[2]:,.0f} ms"
                        f" | {after[0]:,.0f} / {after[1]:,.0f} ms, {after[2]:,.0f} ms | {load()} |",
                        flush=True,
                    )
        conn.close()
        print(f"database: {args.db.stat().st_size / 1e6:,.0f} MB")
    finally:
        if tmp is not None and not args.keep_db:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
