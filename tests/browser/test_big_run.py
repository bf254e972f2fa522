"""A stored run of 10,000 events opens and scrolls without freezing: the page is interactive (graph
drawn, a click on a node answered) within 1 s of navigation. The number is printed (run with -s).

The 1 s is for an idle machine. This one is shared (up to 8 test runs on 2 CPUs), so the budget is
scaled by how slow the same page is right now on a 100-event run, opened the same way in the same
test, interleaved with the big one: `SMALL_REFERENCE_MS` is what that takes here when idle. A page
that got slow on big runs still fails (the small run does not slow down with it); a busy machine
slows both alike."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from _runs import synthetic_events
from playwright.sync_api import expect

from graphmind_server.testing import FakeApp, wait_for

pytestmark = pytest.mark.browser

EVENTS = 10_000
BUDGET_MS = 1000
LONGEST_TASK_MS = 200
SMALL_EVENTS = 100
SMALL_REFERENCE_MS = 400  # the 100-event run's "interactive" on this machine when idle (400-450 ms)


def store_run(hub: Any, run_id: str, total: int) -> list[dict[str, Any]]:
    """A frame-level app sends the run; the hub stores it."""
    events = synthetic_events(run_id, total)
    with FakeApp(hub.ingest_url, app="bench") as app:
        for ev in events:
            fields = {k: v for k, v in ev.items() if k not in ("type", "runId", "seq")}
            app.event(ev["type"], ev["runId"], **fields)

        def stored() -> bool:
            status, body = hub.api("GET", f"/api/runs/{run_id}")
            return status == 200 and body["eventCount"] == len(events)

        wait_for(stored, 30, f"the hub to store {total:,} events")
    return events


def open_and_click(make_page: Any, url: str, run_id: str = "r-big") -> tuple[Any, dict[str, float]]:
    """Open the run in a fresh context (empty cache) and click a node; the page's own clock."""
    page = make_page(url)
    page.goto("about:blank")  # the tab's renderer is up; what is measured is the viewer
    started = time.perf_counter()
    page.goto(f"{url}/#/run/{run_id}")
    page.wait_for_selector("body[data-graph-drawn=true]")
    page.locator(".gnode[data-node-id='tool:search']").click()
    expect(page.locator("#detail h2")).to_have_text("search")
    wall = (time.perf_counter() - started) * 1000
    mark = "(n) => performance.getEntriesByName(n)[0].startTime"
    times = {
        "graph": page.evaluate(mark, "graphmind:graph"),
        "interactive": page.evaluate(mark, "graphmind:detail"),
        "wall": wall,
    }
    page.wait_for_selector("body[data-run-loaded=true]")
    times["loaded"] = page.evaluate(mark, "graphmind:loaded")
    return page, times


def test_a_10000_event_run_is_interactive_within_a_second_and_scrolls(
    hub: Any, browser: Any, make_page: Any
) -> None:
    events = store_run(hub, "r-big", EVENTS)
    store_run(hub, "r-small", SMALL_EVENTS)
    # Three cold opens of each, interleaved: one slow open says more about the neighbours than
    # about the page. All are printed; the best big one must be within the (scaled) budget.
    runs, small = [], []
    for _ in range(3):
        small.append(open_and_click(make_page, hub.url, "r-small")[1]["interactive"])
        runs.append(open_and_click(make_page, hub.url))
    for i, (_, t) in enumerate(runs, 1):
        print(
            f"\n10,000-event run, open {i}: graph drawn {t['graph']:.0f} ms, interactive (node click answered) "
            f"{t['interactive']:.0f} ms, all events folded {t['loaded']:.0f} ms after navigation "
            f"(wall clock goto → detail shown {t['wall']:.0f} ms)",
            end="",
        )
    slowdown = max(1.0, min(small) / SMALL_REFERENCE_MS)
    budget = BUDGET_MS * slowdown
    print(
        f"\n{SMALL_EVENTS}-event run, interactive: "
        + ", ".join(f"{t:.0f}" for t in small)
        + f" ms: this machine is {slowdown:.1f}x its idle speed now, so the budget is {budget:.0f} ms"
    )
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    best = min(t["interactive"] for _, t in runs)
    assert best < budget, f"interactive after {best:.0f} ms at best (budget {BUDGET_MS} ms x {slowdown:.1f})"
    page = runs[-1][0]

    # Every event is folded in: the counts on the graph and in the header match the stored run.
    steps = sum(1 for e in events if e["type"] == "node.started" and e["nodeId"] == "llm:step")
    expect(page.locator(".gnode[data-node-id='llm:step']")).to_contain_text(f"×{steps}")
    expect(page.locator(".run-head .event-count")).to_have_text(f"{len(events)} events")
    executions = sum(1 for e in events if e["type"] in ("node.started", "run.started"))
    expect(page.locator(".tl-count")).to_have_text(f"{executions} executions")

    # The timeline is virtualised: a few dozen rows exist, whatever the run's size.
    rows = page.locator(".tl-row").count()
    assert 0 < rows < 120, rows
    # Scrolling to the end shows the last execution, with no long freeze on the way.
    page.evaluate("""() => { window.__longest = 0; new PerformanceObserver((l) => { for (const e of l.getEntries())
        window.__longest = Math.max(window.__longest, e.duration); }).observe({type: 'longtask'}); }""")
    scroller = page.locator(".tl-scroll")
    for fraction in (0.25, 0.5, 0.75, 1.0):
        scroller.evaluate("(el, f) => { el.scrollTop = (el.scrollHeight - el.clientHeight) * f; }", fraction)
        page.wait_for_timeout(50)  # let a frame render; not synchronisation, a pacing of the scroll
    last = executions - 1
    expect(page.locator(f".tl-row[data-index='{last}']")).to_be_visible()
    assert page.locator(".tl-row").count() < 120
    longest = page.evaluate("() => window.__longest")
    print(f"longest task while scrolling: {longest:.0f} ms")
    assert longest < LONGEST_TASK_MS * slowdown, (
        f"a {longest:.0f} ms task while scrolling ({slowdown:.1f}x slow now)"
    )
