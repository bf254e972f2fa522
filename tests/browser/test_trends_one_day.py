"""The trends page with one day of data: each line chart's lone point is drawn as a dot in its
series colour (a path of one point has no segment and draws nothing)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from graphmind_server.testing import HubProcess
from graphmind_server.testing.generate import generate_runs

pytestmark = pytest.mark.browser


def test_one_day_of_runs_shows_a_mark_per_series(tmp_path: Path, make_page: Any) -> None:
    db = tmp_path / "hub.db"
    # all runs in the day before the local midnight (the browser's time zone is the machine's):
    # one day bucket in the default 30-day range
    midnight = datetime.datetime.now().astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
    generate_runs(db, runs=12, apps=1, models=2, days=1, now_ms=midnight.timestamp() * 1000.0)
    with HubProcess(db) as hub:
        page = make_page(hub.url)
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(f"{hub.url}/#/trends")
        expect(page.locator("body[data-trends-drawn='true']")).to_have_count(1)
        expect(page.locator(".run-head p")).to_contain_text("12 runs")
        marks = page.evaluate(
            """() => [...document.querySelectorAll('.tr-charts svg')].map((svg) => [...svg.querySelectorAll('circle.ch-dot')]
                .map((c) => { const r = c.getBoundingClientRect(); return [c.getAttribute('fill'), r.width > 0 && r.height > 0]; }))"""
        )
        # cost: a dot per model; tokens: bars; latency: p50 and p95; errors: bars
        lines = [m for m in marks if m]
        assert len(lines) == 2, marks
        cost, latency = lines
        assert len(cost) == 2 and len({fill for fill, _ in cost}) == 2, cost
        assert latency == [["#5b8def", True], ["#f2b84b", True]], latency
        assert all(seen for _, seen in cost), cost
        page.close()  # before the hub stops: its live feed would log the refused reconnect
