"""The node_stats rows summed per UTC hour (`node_hourly`) and their run times per UTC day and 30
days (`node_hourly_ms`): what the trends page reads for the whole hours (days) of its range
(store/trends.py), so a year costs a few rows per hour, not one row per call.

A row of `node_hourly` is one hour, app, model and tool (a tool's name, NULL for a call of another
kind: the trends page groups by app, model or tool and prices per model) with its calls, errors,
tokens, reported cost and the tokens no cost was reported for (priced when read, per bucket and
model, as node_stats rows are). `node_hourly_ms` counts the same calls' run times (`duration_ms`),
per day and per 30 days, in the bins of two significant digits that trends.py takes its
percentiles from, with each bin's largest value: a percentile read from the summary is the one
read from node_stats.

An hour holds the rows with `hour <= started_at < hour + 1 h` (`hour_of`; the trends page reads the
edges of its range from node_stats by the same test), for 0 <= started_at < MAX_MS only: a row
outside (a clock at 1970 or far in the future) is read from node_stats alone.

Kept in the writer's transaction: a new row adds itself; a row that replaces one (a re-sent end) and
a run deleted (store/retention.py) rebuild their hours, days and 30 days (a bin's largest value
cannot be taken out).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
SPANS = (DAY_MS, 30 * DAY_MS)  # the latency bins' blocks, the second a whole number of the first
MAX_MS = DAY_MS * 4 * 10**6  # year 12921, a whole day: every hour start below it is exact in a REAL
INT_MAX = 2**63 - 1  # what SQLite's CAST(real AS INTEGER) gives for a larger value

MIGRATION = [
    """CREATE TABLE node_hourly (
        hour INTEGER NOT NULL,
        app TEXT NOT NULL,
        model TEXT,
        tool TEXT,
        calls INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cost_usd REAL NOT NULL,
        left_in INTEGER NOT NULL,
        left_out INTEGER NOT NULL,
        left_cached INTEGER NOT NULL
    )""",
    # unique, for the writer's upsert: a NULL model or tool counts as one value (char(0), never a
    # name: a model is a non-empty string, a tool's name too)
    "CREATE UNIQUE INDEX node_hourly_key ON node_hourly (hour, app, ifnull(model, char(0)), ifnull(tool, char(0)))",
    # a call's run time by bin (`bin`: digits * 100 + the first two digits of its whole ms), for
    # the calls a latency is read of (a model's or a tool's), per UTC day and, summed from the days,
    # per 30 days (`span`, SPANS; `hour`: the block's start): a latency is not read per bucket, and
    # at a few calls per hour and model an hour has about as many bins as calls
    """CREATE TABLE node_hourly_ms (
        span INTEGER NOT NULL,
        hour INTEGER NOT NULL,
        app TEXT NOT NULL,
        model TEXT,
        tool TEXT,
        bin INTEGER NOT NULL,
        n INTEGER NOT NULL,
        top REAL NOT NULL
    )""",
    "CREATE UNIQUE INDEX node_hourly_ms_key ON node_hourly_ms"
    " (span, hour, app, ifnull(model, char(0)), ifnull(tool, char(0)), bin)",
]

# SQL of a node_stats row: its hour and day, its tool, its bin


def _start_sql(span: int) -> str:
    """The start of a node_stats row's block of `span` ms (the division's rounding corrected, so it
    is the block the range test `start <= started_at < start + span` puts it in)."""
    s0 = f"CAST(started_at / {span} AS INTEGER) * {span}"
    return f"({s0} - {span} * (started_at < {s0}) + {span} * (started_at >= {s0} + {span}))"


HOUR_SQL = _start_sql(HOUR_MS)
DAY_SQL = _start_sql(DAY_MS)
TOOL_SQL = "CASE WHEN kind = 'tool' THEN name END"
BIN_SQL = (
    "length(CAST(duration_ms AS INTEGER)) * 100"
    " + CAST(substr(CAST(CAST(duration_ms AS INTEGER) AS TEXT), 1, 2) AS INTEGER)"
)
_TIMED = "duration_ms IS NOT NULL AND (model IS NOT NULL OR kind = 'tool')"
_FILL = f"""INSERT INTO node_hourly SELECT {HOUR_SQL}, app, model, {TOOL_SQL}, COUNT(*), SUM(status = 'error'),
    SUM(input_tokens), SUM(output_tokens), COALESCE(SUM(cost_usd), 0),
    SUM(CASE WHEN cost_usd IS NULL THEN input_tokens ELSE 0 END),
    SUM(CASE WHEN cost_usd IS NULL THEN output_tokens ELSE 0 END),
    SUM(CASE WHEN cost_usd IS NULL THEN cached_tokens ELSE 0 END)
    FROM node_stats WHERE {{where}} GROUP BY 1, 2, 3, 4"""
_FILL_MS = f"""INSERT INTO node_hourly_ms SELECT {DAY_MS}, {DAY_SQL}, app, model, {TOOL_SQL}, {BIN_SQL}, COUNT(*),
    MAX(duration_ms) FROM node_stats WHERE {{where}} AND {_TIMED} GROUP BY 2, 3, 4, 5, 6"""
# a block of the next span, from the blocks of the span before it
_FILL_UP = """INSERT INTO node_hourly_ms SELECT ?, hour - hour % ?, app, model, tool, bin, SUM(n), MAX(top)
    FROM node_hourly_ms WHERE span = ? AND hour >= ? AND hour < ? GROUP BY 2, 3, 4, 5, 6"""


def hour_of(started_at: float) -> int | None:
    """The hour a node_stats row is summed in (as HOUR_SQL), None outside the summary."""
    if not 0 <= started_at < MAX_MS:
        return None
    h = int(started_at / HOUR_MS) * HOUR_MS
    if started_at < h:
        return h - HOUR_MS
    return h + HOUR_MS if started_at >= h + HOUR_MS else h


def bin_of(ms: float) -> int:
    """The bin of a run time (as BIN_SQL: its whole ms' digits and their first two)."""
    text = str(min(int(ms), INT_MAX))
    return len(text) * 100 + int(text[:2])


def blocks(lo: int, hi: int) -> list[tuple[int, int, int]]:
    """Whole days lo..hi as latency blocks (span, first start, end): 30 days where they fit."""
    day, month = SPANS
    if lo >= hi:
        return []
    a, b = lo + (-lo) % month, hi - hi % month
    if a >= b:
        return [(day, lo, hi)]
    return [block for block in [(day, lo, a), (month, a, b), (day, b, hi)] if block[1] < block[2]]


def rebuild(conn: sqlite3.Connection, hours: Iterable[int]) -> None:
    """These hours summed again from node_stats (after rows of them were replaced or deleted), the
    latency bins of their days too, and of their 30 days from those days."""
    again = sorted(set(hours))
    for h in again:
        conn.execute("DELETE FROM node_hourly WHERE hour = ?", (h,))
        conn.execute(_FILL.format(where=f"started_at >= {h} AND started_at < {h + HOUR_MS}"))
    day, month = SPANS
    for d in sorted({h - h % day for h in again}):
        conn.execute("DELETE FROM node_hourly_ms WHERE span = ? AND hour = ?", (day, d))
        conn.execute(_FILL_MS.format(where=f"started_at >= {d} AND started_at < {d + day}"))
    for m in sorted({h - h % month for h in again}):
        conn.execute("DELETE FROM node_hourly_ms WHERE span = ? AND hour = ?", (month, m))
        conn.execute(_FILL_UP, (month, month, day, m, m + month))


_NULLS = "ifnull(model, char(0)), ifnull(tool, char(0))"
_ADD = f"""INSERT INTO node_hourly VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (hour, app, {_NULLS}) DO UPDATE SET
    calls = calls + excluded.calls, errors = errors + excluded.errors,
    input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
    cost_usd = cost_usd + excluded.cost_usd, left_in = left_in + excluded.left_in,
    left_out = left_out + excluded.left_out, left_cached = left_cached + excluded.left_cached"""
_ADD_MS = f"""INSERT INTO node_hourly_ms VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (span, hour, app, {_NULLS}, bin)
    DO UPDATE SET n = n + excluded.n, top = MAX(top, excluded.top)"""


def _fold(
    rows: Iterable[tuple[Any, ...]],
) -> tuple[dict[tuple[Any, ...], list[Any]], dict[tuple[Any, ...], list[Any]]]:
    """node_stats rows (nodestats.COLUMNS order) summed per hour, app, model and tool, and their
    run times per hour, app, model, tool and bin: ({key: sums}, {key: [n, largest]})."""
    sums: dict[tuple[Any, ...], list[Any]] = {}
    bins: dict[tuple[Any, ...], list[Any]] = {}
    for _, _, _, kind, name, model, app, started, ms, status, tin, tout, cached, cost in rows:
        h = hour_of(started)
        if h is None:
            continue
        tool = name if kind == "tool" else None
        key = (h, app, model, tool)
        s = sums.get(key)
        if s is None:
            s = sums[key] = [0, 0, 0, 0, 0.0, 0, 0, 0]
        s[0] += 1
        s[1] += status == "error"
        s[2] += tin
        s[3] += tout
        if cost is None:
            s[5] += tin
            s[6] += tout
            s[7] += cached
        else:
            s[4] += cost
        if ms is not None and (model is not None or kind == "tool"):
            b = bins.get(bkey := (*key, bin_of(ms)))
            if b is None:
                bins[bkey] = [1, ms]
            else:
                b[0] += 1
                b[1] = max(b[1], ms)
    return sums, bins


def _rolled(
    bins: dict[tuple[Any, ...], list[Any]], span: int, into: dict[tuple[Any, ...], list[Any]] | None = None
) -> dict[tuple[Any, ...], list[Any]]:
    """Hours' bins summed into blocks of `span`: {(span, start, app, model, tool, bin): [n, largest]}."""
    up: dict[tuple[Any, ...], list[Any]] = {} if into is None else into
    for (h, *rest), (n, top) in bins.items():
        b = up.get(key := (span, h - h % span, *rest))
        if b is None:
            up[key] = [n, top]
        else:
            b[0] += n
            b[1] = max(b[1], top)
    return up


def add(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """Add new node_stats rows (nodestats.COLUMNS order) to their hours: summed here first, then one
    upsert per hour, app, model and tool, and per bin of their day and 30 days."""
    sums, bins = _fold(rows)
    conn.executemany(_ADD, [(*key, *s) for key, s in sums.items()])
    for span in SPANS:
        conn.executemany(_ADD_MS, [(*key, n, top) for key, (n, top) in _rolled(bins, span).items()])


_SUMMED = f"started_at >= 0 AND started_at < {MAX_MS}"


def backfill(conn: sqlite3.Connection) -> None:
    """The migration: every stored row summed by two GROUP BYs over node_stats (hours; days of
    latency bins), then the 30 days' bins from their days. SQL, not the Python of `add`: on 1.5M
    rows the sums took 2.7 s of CPU in SQL, 8.3 s folded in Python (fetching them alone 2.1 s)."""
    conn.execute(_FILL.format(where=_SUMMED))
    conn.execute(_FILL_MS.format(where=_SUMMED))
    day, month = SPANS
    conn.execute(_FILL_UP, (month, month, day, 0, MAX_MS))
