"""A huge run opens light (viewer/js/values.js): its executions keep no inputs or outputs in the
page, so a million-event run's heap stays small and the timeline scrolls without the collector's
pauses; the detail reads the shown execution's start and end from the hub and draws them as a
full run does. The bar is lowered here (`window.graphmindLightEvents`) so a small run shows it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from graphmind_server.testing import FakeApp, wait_for

pytestmark = pytest.mark.browser


def _store(hub: Any) -> None:
    with FakeApp(hub.ingest_url, app="light") as app:
        app.run_started("r1", "big")
        for i in range(3):
            messages = [{"role": "user", "content": f"Plan day {i} in Lisbon"}]
            app.event("node.started", "r1", nodeId="llm:step", instanceId=f"m{i}", kind="llm", name="step",
                      input={"model": "gpt-4o", "messages": messages})  # fmt: skip
            app.event("node.finished", "r1", nodeId="llm:step", instanceId=f"m{i}", durationMs=3.0,
                      output={"role": "assistant", "content": f"Tram 28 on day {i}"})  # fmt: skip
            app.event("node.started", "r1", nodeId="tool:search", instanceId=f"t{i}", kind="tool",
                      name="search", input={"q": f"museums {i}"})  # fmt: skip
            if i == 2:
                app.event("node.error", "r1", nodeId="tool:search", instanceId=f"t{i}", durationMs=1.0,
                          error={"name": "Timeout", "message": "search took too long"})  # fmt: skip
            else:
                app.event("node.finished", "r1", nodeId="tool:search", instanceId=f"t{i}", durationMs=1.0,
                          output={"hits": [f"Gulbenkian {i}"]})  # fmt: skip
        app.run_finished("r1")

        def stored() -> bool:
            status, body = hub.api("GET", "/api/runs/r1")
            return status == 200 and body["eventCount"] == 14

        wait_for(stored, 30, "the hub to store the run")


def _open(make_page: Any, url: str, light: bool) -> Any:
    page = make_page(url)
    if light:
        page.add_init_script("window.graphmindLightEvents = 5")
    page.goto(f"{url}/#/run/r1")
    page.wait_for_selector("body[data-run-loaded=true]")
    return page


VALUES_KEPT = """() => window.graphmindViewer.store.model.order
    .filter((x) => x.kind !== 'agent' && (x.input !== undefined || x.output !== undefined)).map((x) => x.instanceId)"""


def test_a_huge_run_keeps_values_in_the_hub_and_the_detail_reads_them(hub: Any, make_page: Any) -> None:
    _store(hub)
    full = _open(make_page, hub.url, light=False)
    assert full.evaluate("() => window.graphmindViewer.store.model.light") is False
    assert len(full.evaluate(VALUES_KEPT)) == 6

    page = _open(make_page, hub.url, light=True)
    assert page.evaluate("() => window.graphmindViewer.store.model.light") is True
    assert page.evaluate(VALUES_KEPT) == []  # nothing of the values is in the page

    rows = {
        x: i
        for i, x in enumerate(
            page.evaluate("() => window.graphmindViewer.store.model.order.map((x) => x.instanceId)")
        )
    }
    detail = page.locator("#detail")
    page.locator(f".tl-row[data-index='{rows['m1']}']").click()
    expect(detail).to_contain_text("Plan day 1 in Lisbon")
    expect(detail).to_contain_text("Tram 28 on day 1")
    page.locator(f".tl-row[data-index='{rows['t0']}']").click()
    expect(detail).to_contain_text("museums 0")
    expect(detail.locator("h3", has_text="Output")).to_be_visible()
    output = "(id) => window.graphmindViewer.store.model.order.find((x) => x.instanceId === id).output"
    assert page.evaluate(output, "t0") == {"hits": ["Gulbenkian 0"]}
    page.locator(f".tl-row[data-index='{rows['t2']}']").click()
    expect(detail).to_contain_text("museums 2")
    expect(detail).to_contain_text("Timeout: search took too long")
    assert sorted(page.evaluate(VALUES_KEPT)) == ["m1", "t0", "t2"]  # only what was opened
    assert page.evaluate("() => performance.getEntriesByName('graphmind:detail-values').length") == 3
    # The same execution in both pages (its values fetched once): the same detail.
    page.locator(f".tl-row[data-index='{rows['m1']}']").click()
    expect(detail).to_contain_text("Tram 28 on day 1")
    full.locator(f".tl-row[data-index='{rows['m1']}']").click()
    expect(full.locator("#detail")).to_contain_text("Tram 28 on day 1")
    for each in (page, full):  # the context X-ray comes in its own request: compare once both drew it
        expect(each.locator("#detail .cx-slot[aria-busy]")).to_have_count(0)
    assert page.locator("#detail .d-exec").inner_text() == full.locator("#detail .d-exec").inner_text()
