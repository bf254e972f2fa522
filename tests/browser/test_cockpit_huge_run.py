"""Issue 32, speed on huge runs, against the real hub and real Chromium: on a 1,000,000-event run a
click on the last timeline row shows its detail in < 100 ms (median of 5), a search within the run
answers in < 300 ms (median of 5), and the run is still interactive within 1 s of navigation.

The default suite uses a 20,000-event run (the same code paths, a fraction of the set-up time);
`uv run nox -s huge` runs it at 1,000,000 (GRAPHMIND_HUGE_EVENTS). The database is written by the
hub's own writer before the hub starts (what 1,000,000 events over the socket would leave), so the
set-up takes a minute, not ten. The numbers are printed (run with -s)."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _runs import synthetic_events
from playwright.sync_api import expect
from test_big_run import SMALL_EVENTS, SMALL_REFERENCE_MS, open_and_click

from graphmind_server.store.items import EventItem
from graphmind_server.store.schema import open_database
from graphmind_server.store.writer import Writer
from graphmind_server.testing import HubProcess

pytestmark = pytest.mark.browser

EVENTS = int(os.environ.get("GRAPHMIND_HUGE_EVENTS", "20000"))
CLICK_MS = 100
SEARCH_MS = 300
OPEN_MS = 1000
BATCH = 5000


def write_db(path: Path, run_id: str, total: int, client: str) -> list[dict[str, Any]]:
    # Recent: the hub's start-up prune drops runs older than its --days.
    events = synthetic_events(run_id, total, t0=time.time() * 1000 - total * 3.0 - 60_000)
    conn = open_database(path)
    writer = Writer(conn, lambda _c: None)
    for i in range(0, len(events), BATCH):
        writer.write_now(
            [EventItem(client, "bench", ev, json.dumps(ev), ev["ts"]) for ev in events[i : i + BATCH]]
        )
    conn.close()
    return events


def open_huge(make_page: Any, url: str) -> tuple[Any, dict[str, float]]:
    """test_big_run.open_and_click without waiting for every event to fold (minutes at 1M)."""
    page = make_page(url)
    page.goto("about:blank")
    page.goto(f"{url}/#/run/r-huge")
    page.wait_for_selector("body[data-graph-drawn=true]")
    page.locator(".gnode[data-node-id='tool:search']").click()
    expect(page.locator("#detail h2")).to_have_text("search")
    return page, {
        "interactive": page.evaluate("() => performance.getEntriesByName('graphmind:detail')[0].startTime")
    }


@pytest.fixture
def huge(tmp_path: Path) -> Iterator[tuple[HubProcess, list[dict[str, Any]]]]:
    """The hub on a database holding the huge run and a 100-event one (set up before the page, so
    the page closes before the hub stops)."""
    started = time.perf_counter()
    events = write_db(tmp_path / "hub.db", "r-huge", EVENTS, "c1")
    write_db(tmp_path / "hub.db", "r-small", SMALL_EVENTS, "c2")  # its own app: seqs are per client
    print(f"\n{len(events):,} events written in {time.perf_counter() - started:.1f} s")
    with HubProcess(tmp_path / "hub.db") as hub:
        yield hub, events


def test_a_huge_run_answers_a_timeline_click_and_an_in_run_search_fast(huge: Any, make_page: Any) -> None:
    hub, events = huge
    executions = sum(1 for e in events if e["type"] in ("node.started", "run.started"))
    # Opening stays interactive within 1 s (test_big_run.py's budget, scaled the same way by how
    # slow a 100-event run opens on this shared machine right now).
    small = [open_and_click(make_page, hub.url, "r-small")[1]["interactive"] for _ in range(2)]
    opens = [open_huge(make_page, hub.url) for _ in range(2)]
    slowdown = max(1.0, min(small) / SMALL_REFERENCE_MS)
    best = min(t["interactive"] for _, t in opens)
    huge_ms = ", ".join(f"{t['interactive']:.0f}" for _, t in opens)
    small_ms = ", ".join(f"{t:.0f}" for t in small)
    print(
        f"interactive (graph drawn, a node click answered): {huge_ms} ms after navigation; "
        f"the 100-event run {small_ms} ms ({slowdown:.1f}x idle)"
    )
    assert best < OPEN_MS * slowdown, (best, slowdown)
    page = opens[-1][0]

    page.wait_for_selector("body[data-run-loaded=true]", timeout=600_000)
    loaded = page.evaluate("() => performance.getEntriesByName('graphmind:loaded')[0].startTime")
    print(f"all {len(events):,} events folded {loaded / 1000:.1f} s after navigation")
    expect(page.locator(".tl-count")).to_have_text(f"{executions} executions")
    scroller = page.locator(".tl-scroll")
    scroller.evaluate("el => { el.scrollTop = el.scrollHeight; }")
    last = executions - 1
    expect(page.locator(f".tl-row[data-index='{last}']")).to_be_visible()
    expect(page.locator(f".tl-row[data-index='{last - 1}']")).to_be_visible()

    # A click, then frames until the detail shows that execution (its instance id): that is
    # what the person waits for. The last row and the one before it alternate (tool, model
    # step), so every click renders a different node's detail.
    clicks = []
    for i in range(5):
        index = last - (i % 2)
        took = page.evaluate(
            """async (index) => {
            const m = window.graphmindViewer.store.model;
            const want = m.order[index].instanceId;
            const row = document.querySelector(`.tl-row[data-index='${index}']`);
            const t0 = performance.now();
            row.click();
            await new Promise((done) => {
                const check = () => {
                    const shown = [...document.querySelectorAll('#detail .facts dd.mono')].map((e) => e.textContent);
                    if (shown.includes(want)) done(); else requestAnimationFrame(check);
                };
                requestAnimationFrame(check);
            });
            return performance.now() - t0;
        }""",
            index,
        )
        clicks.append(took)
    click_median = statistics.median(clicks)
    print(
        "timeline click → detail shown: "
        + ", ".join(f"{t:.0f}" for t in clicks)
        + f" ms (median {click_median:.0f})"
    )
    assert click_median < CLICK_MS * slowdown, (clicks, slowdown)  # scaled like the open (shared machine)

    steps = sum(1 for e in events if e["type"] == "node.started" and e["nodeId"] == "llm:step")
    searches = []
    box = page.get_by_label("Search this run")
    for k in range(5):
        n = steps - 1 - k * (steps // 6)
        before = page.evaluate("() => document.body.dataset.runSearch || ''")
        box.fill(f"query {n}")
        box.press("Enter")
        page.wait_for_function("(b) => (document.body.dataset.runSearch || '') !== b", arg=before)
        took = page.evaluate("""() => { const s = performance.getEntriesByName('graphmind:run-search-start');
            const e = performance.getEntriesByName('graphmind:run-search');
            return e[e.length - 1].startTime - s[s.length - 1].startTime; }""")
        searches.append(took)
        expect(page.locator(".rs-hit").first).to_contain_text(f"{n}")
    search_median = statistics.median(searches)
    print("in-run search: " + ", ".join(f"{t:.0f}" for t in searches) + f" ms (median {search_median:.0f})")
    assert search_median < SEARCH_MS * slowdown, (searches, slowdown)
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
