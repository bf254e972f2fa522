"""Cost, tokens, latency and errors over time, per app, model or tool (docs/api.md
`GET /api/trends`): SQL aggregates over the `runs` and `node_stats` rows of a time range, read by
their indexes; no event's JSON is parsed. Costs the framework did not report are priced here from
the price table (store/prices.py), once per (bucket, model) group, as a run's are.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import hourly, prices

HOUR_MS = 3_600_000.0
DAY_MS = 24 * HOUR_MS
GROUPS = ("app", "model", "tool")
SERIES_MAX = 8  # groups drawn as their own line; the rest are in the table only


@dataclass(frozen=True)
class TrendQuery:
    since: float  # ms, inclusive
    until: float  # ms, exclusive
    group: str = "model"  # app | model | tool
    bucket: str | None = None  # hour | day; None: by the range (hours up to two days)
    tz_offset_min: int = 0  # the viewer's offset from UTC: days start at its midnight
    app: str | None = None  # only this app's runs

    def size(self) -> float:
        if self.bucket is not None:
            return HOUR_MS if self.bucket == "hour" else DAY_MS
        return HOUR_MS if self.until - self.since <= 2 * DAY_MS else DAY_MS


def _bucket_sql(q: TrendQuery, column: str) -> tuple[str, list[Any]]:
    """The bucket start (ms) of a time column: floor to the size, in the viewer's time zone."""
    off = q.tz_offset_min * 60_000.0
    return f"(CAST(({column} + ?) / ? AS INTEGER) * ? - ?)", [off, q.size(), q.size(), off]


def _percentiles(
    conn: sqlite3.Connection, source: str, args: list[Any]
) -> dict[Any, tuple[float | None, float | None]]:
    """{key: (p50, p95)} by nearest rank, to two significant digits, over `source` (a SELECT of `k`
    and `v`, v >= 0). SQL counts the values per key in bins of two significant digits (one GROUP
    BY, about a third of the time of sorting every value in a window); the rank's bin gives its
    largest value, a value that was measured."""
    bins: dict[Any, dict[int, list[Any]]] = {}
    for k, b, n, top in conn.execute(
        f"SELECT k, {hourly.BIN_SQL.replace('duration_ms', 'v')}, COUNT(*), MAX(v) FROM ({source})"
        " WHERE v IS NOT NULL GROUP BY 1, 2",
        args,
    ):
        _into(bins, k, b, n, top)
    return {k: _ranked(b) for k, b in bins.items()}


def _into(bins: dict[Any, dict[int, list[Any]]], k: Any, b: int, n: int, top: float) -> None:
    """Count n values of bin b (largest: top) for key k."""
    had = bins.setdefault(k, {}).get(b)
    if had is None:
        bins[k][b] = [n, top]
    else:
        had[0] += n
        had[1] = max(had[1], top)


def _ranked(bins: dict[int, list[Any]]) -> tuple[float | None, float | None]:
    """(p50, p95) of a key's bins: the largest value of the bin the nearest rank falls in."""
    rows = [bins[b] for b in sorted(bins)]
    total = sum(n for n, _ in rows)

    def at(p: float) -> float:
        rank, seen = max(1, math.ceil(p * total)), 0
        for n, top in rows:
            seen += n
            if seen >= rank:
                return float(top)
        return float(rows[-1][1])

    return at(0.5), at(0.95)


def _priced(
    model: str | None,
    reported: float,
    left_in: int,
    left_out: int,
    left_cached: int,
    known: dict[str, tuple[float, float, float] | None],
) -> tuple[float, bool]:
    """(cost, whether some tokens had no price) of a group's reported cost plus its unpriced tokens
    (`known`: the prices looked up so far in this request, one look-up per model)."""
    if not (left_in or left_out):
        return reported, False
    if model and model not in known:
        known[model] = prices.price(model)
    p = known[model] if model else None
    if p is None:
        return reported, True
    per_in, per_out, per_cached = p
    cached = min(left_cached, left_in)
    return reported + ((left_in - cached) * per_in + cached * per_cached + left_out * per_out) / 1e6, False


_USAGE_COLS = """SUM(input_tokens), SUM(output_tokens), COALESCE(SUM(cost_usd), 0),
    SUM(CASE WHEN cost_usd IS NULL THEN input_tokens ELSE 0 END),
    SUM(CASE WHEN cost_usd IS NULL THEN output_tokens ELSE 0 END),
    SUM(CASE WHEN cost_usd IS NULL THEN cached_tokens ELSE 0 END)"""


def _group_expr(group: str, summary: bool = False) -> tuple[str, str]:
    """(key expression, extra WHERE) of node_stats rows (or of the summary's) for a grouping."""
    if group == "tool":
        return ("tool", "tool IS NOT NULL") if summary else ("name", "kind = 'tool'")
    if group == "model":
        return "model", "model IS NOT NULL"
    return "app", "1"


@dataclass(frozen=True)
class Spans:
    """Where a query's calls are read: whole hours lo..hi from the summary, the rest (`edges`) from
    node_stats. With a time zone offset that is not whole hours (`cut`), an hour a bucket starts
    in is read from node_stats too (the summary's other hours are whole in one bucket). The
    latency is not by bucket: whole UTC days `days` from the summary's bins, `latency_edges` from
    node_stats."""

    lo: int
    hi: int
    off: int
    size: int
    cut: bool
    edges: list[tuple[float, float]]
    days: tuple[int, int]
    latency_edges: list[tuple[float, float]]


def _spans(conn: sqlite3.Connection, q: TrendQuery, summary: bool) -> Spans:
    h, day = hourly.HOUR_MS, hourly.DAY_MS
    off, size = q.tz_offset_min * 60_000, int(q.size())
    everything = [(q.since, q.until)]
    d_lo, d_hi = max(_at_or_after(q.since, day), 0), min(_at_or_before(q.until, day), hourly.MAX_MS)
    days, latency_edges = (
        (d_lo, d_hi),
        [e for e in [(q.since, float(d_lo)), (float(d_hi), q.until)] if e[0] < e[1]],
    )
    if not summary or d_lo >= d_hi:
        days, latency_edges = (0, 0), everything
    # whole hours, at or after 0 in the viewer's time zone too (a bucket's CAST truncates at 0)
    lo = max(_at_or_after(q.since, h), 0, _at_or_after(-off, h))
    hi = min(_at_or_before(q.until, h), hourly.MAX_MS)
    cut = off % h != 0
    if not summary or lo >= hi or (cut and size == h):
        return Spans(0, 0, off, size, cut, everything, days, latency_edges)
    cuts: list[tuple[float, float]] = []
    if cut:  # the hours a bucket starts in (those holding calls): read from node_stats
        for (start,) in conn.execute(
            "SELECT DISTINCT hour FROM node_hourly WHERE hour >= ? AND hour < ? AND (hour + ?) % ? > ? ORDER BY 1",
            (lo, hi, off, size, size - h),
        ):
            cuts.append((float(start), float(start + h)))
    edges = [e for e in [(q.since, float(lo)), *cuts, (float(hi), q.until)] if e[0] < e[1]]
    return Spans(lo, hi, off, size, cut, edges, days, latency_edges)


def _at_or_after(t: float, span: int) -> int:
    """The first multiple of span at or after t (exactly: t is a float, the result an int)."""
    at = math.ceil(t / span) * span
    if at - span >= t:
        at -= span
    return at + span if at < t else at


def _at_or_before(t: float, span: int) -> int:
    at = _at_or_after(t, span)
    return at - span if at > t else at


def _nulls_first(v: Any) -> tuple[bool, Any]:
    return (v is not None, "" if v is None else v)


def _add_sums(into: dict[tuple[Any, ...], list[Any]], rows: Iterable[tuple[Any, ...]]) -> None:
    for b, model, k, *figures in rows:
        had = into.get(key := (int(b), model, k))
        if had is None:
            into[key] = list(figures)
        else:
            for i, v in enumerate(figures):
                had[i] = (had[i] or 0) + (v or 0)


def _latency(
    conn: sqlite3.Connection,
    sp: Spans,
    node: tuple[str, str],
    summed: tuple[str, str],
    app: tuple[str, list[Any]],
) -> dict[Any, tuple[float | None, float | None]]:
    """{group: (p50, p95)} of the calls' run times: the summary's bins and node_stats' at the edges."""
    (key, where), (hkey, hwhere), (app_where, app_args) = node, summed, app
    bins: dict[Any, dict[int, list[Any]]] = {}
    for since, until in sp.latency_edges:
        for k, b, n, top in conn.execute(
            f"SELECT {key}, {hourly.BIN_SQL}, COUNT(*), MAX(duration_ms) FROM node_stats"
            f" WHERE started_at >= ? AND started_at < ? {app_where} AND {where} AND duration_ms IS NOT NULL"
            " GROUP BY 1, 2",
            [since, until, *app_args],
        ):
            _into(bins, k, b, n, top)
    for span, first, end in hourly.blocks(*sp.days):  # days, and 30 days where they fit
        for k, b, n, top in conn.execute(
            f"SELECT {hkey}, bin, SUM(n), MAX(top) FROM node_hourly_ms WHERE span = ? AND hour >= ? AND hour < ?"
            f" {app_where} AND {hwhere} GROUP BY 1, 2",
            [span, first, end, *app_args],
        ):
            _into(bins, k, b, n, top)
    return {k: _ranked(b) for k, b in bins.items()}


def trends(conn: sqlite3.Connection, q: TrendQuery, summary: bool = True) -> dict[str, Any]:
    """The page's figures; `summary=False` reads every call from node_stats (what the hourly
    summary must equal, tests/test_trends_hourly.py)."""
    bucket_n, bargs_n = _bucket_sql(q, "started_at")
    app_where, app_args = ("AND app = ?", [q.app]) if q.app is not None else ("", [])
    span = [q.since, q.until]

    # -- runs per bucket: count, errors, wall time less held time (p50/p95)
    buckets: dict[int, dict[str, Any]] = {}

    def slot(b: Any) -> dict[str, Any]:
        return buckets.setdefault(
            int(b),
            {"t": int(b), "runs": 0, "errors": 0, "inputTokens": 0, "outputTokens": 0, "costUsd": 0.0},
        )

    run_where = f"started_at >= ? AND started_at < ? {app_where}"
    for b, runs, errors in conn.execute(
        f"SELECT {bucket_n}, COUNT(*), SUM(status = 'error') FROM runs WHERE {run_where} GROUP BY 1",
        [*bargs_n, *span, *app_args],
    ):
        s = slot(b)
        s["runs"], s["errors"] = runs, errors or 0
    ran = "CASE WHEN ended_at IS NOT NULL THEN MAX(0, ended_at - started_at - held_ms) END"
    for b, (p50, p95) in _percentiles(
        conn, f"SELECT {bucket_n} AS k, {ran} AS v FROM runs WHERE {run_where}", [*bargs_n, *span, *app_args]
    ).items():
        s = slot(b)
        s["p50Ms"], s["p95Ms"] = p50, p95

    # -- tokens and cost per bucket, model and group (priced per bucket and model), the groups' cost
    # series, and each group's calls, errors, tokens and cost: whole hours from the summary, the
    # edges from node_stats (`_spans`)
    key, group_where = _group_expr(q.group)
    hkey, hgroup_where = _group_expr(q.group, summary=True)
    sp = _spans(conn, q, summary)
    sums: dict[tuple[Any, ...], list[Any]] = {}
    for since, until in sp.edges:
        _add_sums(
            sums,
            conn.execute(
                f"SELECT {bucket_n}, model, CASE WHEN {group_where} THEN {key} END AS k, COUNT(*),"
                f" SUM(status = 'error'), {_USAGE_COLS} FROM node_stats"
                f" WHERE started_at >= ? AND started_at < ? {app_where} GROUP BY 1, 2, 3",
                [*bargs_n, since, until, *app_args],
            ),
        )
    if sp.lo < sp.hi:
        bucket_h, bargs_h = _bucket_sql(q, "hour")
        whole, whole_args = (
            ("AND (hour + ?) % ? <= ?", [sp.off, sp.size, sp.size - hourly.HOUR_MS]) if sp.cut else ("", [])
        )
        _add_sums(
            sums,
            conn.execute(
                f"SELECT {bucket_h}, model, CASE WHEN {hgroup_where} THEN {hkey} END AS k, SUM(calls),"
                " SUM(errors), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd), SUM(left_in),"
                f" SUM(left_out), SUM(left_cached) FROM node_hourly WHERE hour >= ? AND hour < ? {whole}"
                f" {app_where} GROUP BY 1, 2, 3",
                [*bargs_h, sp.lo, sp.hi, *whole_args, *app_args],
            ),
        )
    series: dict[str, dict[int, float]] = {}
    groups: dict[str, dict[str, Any]] = {}
    unpriced = False
    known: dict[str, tuple[float, float, float] | None] = {}

    def group(k: str) -> dict[str, Any]:
        return groups.setdefault(
            k, {"key": k, "count": 0, "errors": 0, "inputTokens": 0, "outputTokens": 0, "costUsd": 0.0}
        )

    # in the order SQL's GROUP BY gave them when it all came from node_stats (NULLs first)
    for (b, model, k), (n, errors, tin, tout, reported, left_in, left_out, left_cached) in sorted(
        sums.items(), key=lambda kv: (kv[0][0], *_nulls_first(kv[0][1]), *_nulls_first(kv[0][2]))
    ):
        cost, missing = _priced(model, reported, left_in or 0, left_out or 0, left_cached or 0, known)
        unpriced = unpriced or missing
        s = slot(b)
        s["inputTokens"] += tin or 0
        s["outputTokens"] += tout or 0
        s["costUsd"] += cost
        if k is None:
            continue
        per = series.setdefault(str(k), {})
        per[int(b)] = per.get(int(b), 0.0) + cost
        g = group(str(k))
        if q.group != "app":  # an app's count is its runs (below)
            g["count"] += n
            g["errors"] += errors or 0
        g["inputTokens"] += tin or 0
        g["outputTokens"] += tout or 0
        g["costUsd"] += cost

    # -- the groups' latency (and an app's runs and errors)
    if q.group == "app":
        gsql_runs = f"FROM runs WHERE {run_where}"
        for k, n, errors in conn.execute(
            f"SELECT app, COUNT(*), SUM(status = 'error') {gsql_runs} GROUP BY 1", [*span, *app_args]
        ):
            g = group(k)
            g["count"], g["errors"] = n, errors or 0
        lat = _percentiles(conn, f"SELECT app AS k, {ran} AS v {gsql_runs}", [*span, *app_args])
    else:
        lat = _latency(conn, sp, (key, group_where), (hkey, hgroup_where), (app_where, app_args))
    for k, (p50, p95) in lat.items():
        if str(k) in groups:
            groups[str(k)].update(p50Ms=p50, p95Ms=p95)

    size = q.size()
    rows = sorted(buckets.values(), key=lambda s: s["t"])
    for s in rows:
        s["errorRate"] = s["errors"] / s["runs"] if s["runs"] else None
        s["costUsd"] = round(s["costUsd"], 8)
        s.setdefault("p50Ms", None)
        s.setdefault("p95Ms", None)
    ranked = sorted(groups.values(), key=lambda g: (-(g.get("costUsd") or 0.0), -g["count"], g["key"]))
    for g in ranked:
        g["errorRate"] = g["errors"] / g["count"] if g["count"] else None
        g["costUsd"] = round(g["costUsd"], 8)
        g.setdefault("p50Ms", None)
        g.setdefault("p95Ms", None)
    top = [g["key"] for g in ranked[:SERIES_MAX]]
    return {
        "since": q.since,
        "until": q.until,
        "bucket": "hour" if size == HOUR_MS else "day",
        "bucketMs": size,
        "group": q.group,
        "app": q.app,
        "buckets": rows,
        "groups": ranked,
        "series": [
            {"key": k, "costUsd": [round(series.get(k, {}).get(s["t"], 0.0), 8) for s in rows]} for k in top
        ],
        "unpricedModels": unpriced,
        "apps": [a for (a,) in conn.execute("SELECT DISTINCT app FROM runs ORDER BY app LIMIT 200")],
    }
