"""Issue 32, search and filters, against the real hub and real Chromium: a search for a tool
argument value finds the run among 200; filters by status and tool narrow the list; the URL
reproduces the view."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from graphmind_server.testing import FakeApp, wait_for

pytestmark = pytest.mark.browser
RUNS = 200


def store_runs(hub: Any) -> None:
    with FakeApp(hub.ingest_url, app="fleet") as app:
        for i in range(RUNS):
            run_id = f"run-{i:03d}"
            app.run_started(run_id, name=f"trip {i:03d}")
            tool = "weather" if i % 2 else "search"
            city = "ulaanbaatar" if i == 137 else f"city{i}"
            app.node_started(run_id, f"tool:{tool}", f"t{i}", input={"city": city})
            if i % 5 == 0:
                app.event(
                    "node.error",
                    run_id,
                    nodeId=f"tool:{tool}",
                    instanceId=f"t{i}",
                    error={"name": "E", "message": "down"},
                    durationMs=1.0,
                )
                app.run_finished(run_id, status="error")
            else:
                app.node_finished(run_id, f"tool:{tool}", f"t{i}", output={"ok": i})
                app.run_finished(run_id)
        wait_for(
            lambda: (
                len(hub.api("GET", "/api/runs?limit=1000")[1]["runs"]) == RUNS
                and hub.api("GET", "/api/runs/run-199")[1].get("status") == "finished"
            ),
            30,
            "200 runs stored",
        )


def shown(page: Any) -> list[str]:
    return page.locator(".run-item").evaluate_all("els => els.map(e => e.dataset.runId)")


def test_search_finds_a_tool_argument_among_200_runs_filters_narrow_and_the_url_reproduces(
    hub: Any, make_page: Any
) -> None:
    store_runs(hub)
    page = make_page(hub.url)
    page.goto(hub.url)
    expect(page.locator(".run-count")).to_have_text(
        f"{RUNS} runs (newest {RUNS} shown)" if RUNS > 500 else f"{RUNS} runs"
    )

    page.get_by_label("Search runs").fill("ulaanbaatar")
    expect(page.locator(".run-item")).to_have_count(1)
    assert shown(page) == ["run-137"]
    assert "q=ulaanbaatar" in page.url

    page.get_by_label("Search runs").fill("")
    expect(page.locator(".run-item")).to_have_count(RUNS)
    page.get_by_label("Filter by status").select_option("error")
    expect(page.locator(".run-item")).to_have_count(RUNS // 5)
    page.locator(".filter-more summary").click()
    page.get_by_label("Filter by tool name").fill("weather")
    # errors are the runs i % 5 == 0, weather the odd ones: i % 10 == 5
    expect(page.locator(".run-item")).to_have_count(RUNS // 10)
    assert all(int(r[-3:]) % 10 == 5 for r in shown(page))
    url = page.url
    assert "status=error" in url and "tool=weather" in url

    # The address alone reproduces the view, in a fresh page.
    again = make_page(hub.url)
    again.goto(url)
    expect(again.locator(".run-item")).to_have_count(RUNS // 10)
    assert sorted(shown(again)) == sorted(shown(page))
    expect(again.get_by_label("Filter by status")).to_have_value("error")
    expect(again.get_by_label("Filter by tool name")).to_have_value("weather")

    # Has-error, and a search with no hit says so.
    again.get_by_label("Search runs").fill("nowhere-at-all")
    expect(again.locator(".run-count")).to_have_text("No run matches these filters.")
