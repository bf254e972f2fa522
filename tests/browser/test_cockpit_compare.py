"""Issue 32, compare, against the real hub and real Chromium: two runs that differ in one tool's
output show that step as changed and the others as equal; `graphmind diff A B` exits 1 and prints
that step."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _apps import attached_client
from playwright.sync_api import expect

import graphmind
from graphmind_server.testing import wait_for

pytestmark = pytest.mark.browser


@pytest.fixture
def gm(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "cockpit-compare")
    try:
        yield c
    finally:
        c.dispose()


def trip(hub: Any, gm: graphmind.Client, name: str, sky: str) -> str:
    search = gm.wrap(lambda city: {"flights": 2, "city": city}, name="search")
    weather = gm.wrap(lambda city: {"sky": sky}, name="weather")
    book = gm.wrap(lambda flight: {"booked": flight}, name="book")
    with gm.run(name) as run:
        search(city="berlin")
        weather(city="berlin")
        book(flight="TP-544")
    wait_for(
        lambda: hub.api("GET", f"/api/runs/{run.run_id}")[1].get("status") == "finished", 10, "run finished"
    )
    return run.run_id


def test_compare_shows_the_one_changed_step_and_graphmind_diff_exits_1(
    hub: Any, gm: graphmind.Client, make_page: Any, tmp_path: Path
) -> None:
    a = trip(hub, gm, "trip-a", "sunny")
    b = trip(hub, gm, "trip-b", "storm")
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/{a}")
    page.wait_for_selector("body[data-run-loaded=true]")
    page.get_by_label("Compare with run").select_option(b)
    page.wait_for_selector("body[data-compare-loaded=true]")
    expect(page.locator(".cmp-head h1")).to_have_text("The runs differ")
    steps = page.locator(".cmp-step")
    expect(steps).to_have_count(3)
    assert steps.evaluate_all("els => els.map(e => [e.dataset.nodeId, e.dataset.status])") == [
        ["tool:search", "equal"],
        ["tool:weather", "changed"],
        ["tool:book", "equal"],
    ]
    changed = page.locator(".cmp-step.cmp-changed")
    expect(changed.locator(".cmp-diffs h3")).to_have_text(["output differs"])
    expect(changed.locator(".diff-del")).to_contain_text('"sky": "sunny"')
    expect(changed.locator(".diff-add")).to_contain_text('"sky": "storm"')

    env = {**os.environ, "GRAPHMIND_HOME": str(tmp_path)}
    db = str(hub.db)
    out = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "diff", a, b, "--db", db],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 1, out.stderr
    assert "~ tool:weather #1  output differ" in out.stdout
    assert '"storm"' in out.stdout and "= tool:search #1" in out.stdout
    same = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "diff", a, a, "--db", db],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert same.returncode == 0 and "the runs match" in same.stdout
