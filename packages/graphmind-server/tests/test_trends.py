"""The trends API (docs/api.md `GET /api/trends`): node_stats rows written with the events, summed by
SQL, priced as a run's usage is; the migration fills them for events stored before."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from graphmind_server.store import nodestats, prices
from graphmind_server.store.schema import MIGRATIONS, migrate
from graphmind_server.store.trends import TrendQuery, trends
from graphmind_server.testing.generate import generate_runs


def _run(
    app: Any,
    run_id: str,
    model: str,
    tokens: tuple[int, int],
    *,
    cost: float | None = None,
    fail: bool = False,
) -> None:
    app.run_started(run_id, name="turn")
    usage: dict[str, Any] = {"inputTokens": tokens[0], "outputTokens": tokens[1], "totalTokens": sum(tokens)}
    if cost is not None:
        usage["costUsd"] = cost
    app.node_started(run_id, "llm:step", f"{run_id}-s1", input={"messages": []}, attrs={"model": model})
    app.event(
        "node.finished",
        run_id,
        nodeId="llm:step",
        instanceId=f"{run_id}-s1",
        output="ok",
        usage=usage,
        durationMs=300.0,
        heldMs=100.0,
    )
    app.node_started(run_id, "tool:search", f"{run_id}-t1", input={"q": 1})
    if fail:
        app.event(
            "node.error",
            run_id,
            nodeId="tool:search",
            instanceId=f"{run_id}-t1",
            error={"name": "E", "message": "x"},
            durationMs=5.0,
        )
    else:
        app.event(
            "node.finished",
            run_id,
            nodeId="tool:search",
            instanceId=f"{run_id}-t1",
            output=1,
            durationMs=7.0,
            heldMs=0,
        )
    app.run_finished(run_id, status="error" if fail else "finished")


def _day() -> str:
    now = time.time() * 1000
    return f"since={now - 86_400_000:.0f}&until={now + 60_000:.0f}"


def test_per_model_cost_equals_the_runs_usage_and_tools_count_their_errors(thub: Any) -> None:
    app = thub.app(app="shop")
    _run(app, "a", "gpt-4o-mini", (1000, 200))
    _run(app, "b", "gpt-4o-mini", (3000, 100), fail=True)
    _run(app, "c", "claude-sonnet-4", (500, 50), cost=0.0123)
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 3, what="3 runs")
    status, body = thub.api("GET", f"/api/trends?group=model&{_day()}")
    assert status == 200, body
    by = {g["key"]: g for g in body["groups"]}
    runs = thub.api("GET", "/api/runs")[1]["runs"]
    for model in ("gpt-4o-mini", "claude-sonnet-4"):
        expected = sum(r["usage"]["models"].get(model, {}).get("costUsd") or 0 for r in runs)
        assert by[model]["costUsd"] == pytest.approx(expected, abs=1e-9)
    p_in, p_out, _ = prices.price("gpt-4o-mini") or (0, 0, 0)
    assert by["gpt-4o-mini"]["costUsd"] == pytest.approx((4000 * p_in + 300 * p_out) / 1e6)
    assert by["claude-sonnet-4"]["costUsd"] == pytest.approx(0.0123)  # reported, never re-priced
    assert by["gpt-4o-mini"]["count"] == 2 and by["gpt-4o-mini"]["p50Ms"] == 200.0  # ran: 300 less 100 held
    assert body["bucket"] == "hour" and sum(b["runs"] for b in body["buckets"]) == 3
    assert sum(b["errors"] for b in body["buckets"]) == 1
    assert sum(b["costUsd"] for b in body["buckets"]) == pytest.approx(
        sum(g["costUsd"] for g in body["groups"])
    )
    tools = {g["key"]: g for g in thub.api("GET", f"/api/trends?group=tool&{_day()}")[1]["groups"]}
    assert set(tools) == {"search"} and tools["search"]["count"] == 3 and tools["search"]["errors"] == 1
    apps = thub.api("GET", f"/api/trends?group=app&{_day()}")[1]
    assert [(g["key"], g["count"], g["errors"]) for g in apps["groups"]] == [("shop", 3, 1)]
    # a deleted run leaves the trends with it
    assert thub.api("DELETE", "/api/runs/b")[0] == 200
    tools = {g["key"]: g for g in thub.api("GET", f"/api/trends?group=tool&{_day()}")[1]["groups"]}
    assert tools["search"]["count"] == 2 and tools["search"]["errors"] == 0


def test_bad_trend_parameters_get_one_line(thub: Any) -> None:
    for query, words in [
        ("group=user", "group must be one of app, model, tool"),
        ("bucket=week", "bucket must be hour or day"),
        ("since=10&until=5", "since must be before until"),
        ("since=0&until=3456000000&bucket=hour", "bucket=hour covers at most 31 days"),
        ("since=abc", "since must be a time in ms"),
    ]:
        status, body = thub.api("GET", f"/api/trends?{query}")
        assert status == 400 and words in body["error"], (query, body)


def test_the_migration_fills_node_stats_from_events_stored_before(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    made = generate_runs(db, runs=60, apps=2, models=3, days=3)
    conn = sqlite3.connect(db, isolation_level=None)
    q = TrendQuery(made.since_ms - 1, made.until_ms + 1, "model")
    before = trends(conn, q)
    rows = conn.execute("SELECT * FROM node_stats ORDER BY run_id, instance_id").fetchall()
    assert len(rows) > 60
    # as a database from before the table existed: its migration and every later one not yet run
    number = next(i for i, steps in enumerate(MIGRATIONS) if nodestats.backfill in steps)
    conn.execute("DROP TABLE node_stats")
    conn.execute("DROP INDEX runs_by_app_start")
    for steps in MIGRATIONS[number + 1 :]:
        for step in steps:
            made = re.match(r"\s*CREATE TABLE (\w+)", step) if isinstance(step, str) else None
            if made:
                conn.execute(f"DROP TABLE {made.group(1)}")
    conn.execute("UPDATE schema_version SET version = ?", (number,))
    migrate(conn, db)
    assert conn.execute("SELECT * FROM node_stats ORDER BY run_id, instance_id").fetchall() == rows
    assert trends(conn, q) == before
    conn.close()


def test_percentiles_are_nearest_rank_to_two_significant_digits() -> None:
    from graphmind_server.store.trends import _percentiles

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (k TEXT, v REAL)")
    conn.executemany("INSERT INTO t VALUES ('a', ?)", [(float(v),) for v in range(1, 101)])
    conn.executemany("INSERT INTO t VALUES ('b', ?)", [(1234.5,), (0.25,), (None,)])
    got = _percentiles(conn, "SELECT k, v FROM t", [])
    assert got["a"] == (50.0, 95.0)  # exact below 100
    assert got["b"] == (0.25, 1234.5)  # a measured value, never one made up
