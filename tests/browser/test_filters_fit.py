""" "More filters" fits the runs list at every width: each control inside the viewport and on top
(the element at its centre is the control, not the run view), and the panel never over the run
header."""

from __future__ import annotations

from typing import Any

import pytest
from _apps import attached_client
from playwright.sync_api import expect

from graphmind_server.testing import wait_for

pytestmark = pytest.mark.browser

CONTROLS = [
    "#filter-kind",
    "#filter-tool",
    "#filter-model",
    "#filter-error",
    "#filter-held",
    "#filter-since",
    "#filter-until",
    ".filter-more .filter-clear",
]

# For each control: its box, whether it lies inside the viewport, and what is drawn at its centre.
REACHABLE = """(sels) => sels.map((sel) => {
  const el = document.querySelector(sel);
  if (!el) return { sel, missing: true };
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {
    sel,
    box: [Math.round(r.left), Math.round(r.top), Math.round(r.right), Math.round(r.bottom)],
    inside: r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight,
    onTop: !!hit && (hit === el || el.contains(hit)),
    hit: hit ? `${hit.tagName.toLowerCase()}.${hit.className}` : null,
  };
})"""


@pytest.mark.parametrize("width,height", [(1280, 720), (1024, 640), (1600, 900), (1920, 1080)])
def test_every_more_filters_control_is_clickable(
    hub: Any, make_page: Any, shoot: Any, width: int, height: int
) -> None:
    client = attached_client(hub, "filters-app")
    try:
        with client.run("a run with a long name to fill the header"):
            client.wrap(lambda q: q, name="search")(q="lisbon")
    finally:
        client.dispose()
    run_id = wait_for(lambda: hub.api("GET", "/api/runs")[1]["runs"], 10, "the run")[0]["id"]
    page = make_page(hub.url)
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{hub.url}/#/run/{run_id}")
    page.wait_for_selector("body[data-run-loaded=true]")
    page.get_by_text("More filters").click()
    expect(page.locator("#filter-until")).to_be_visible()
    shoot(page, f"more-filters-{width}x{height}")
    boxes = page.evaluate(REACHABLE, CONTROLS)
    bad = [b for b in boxes if b.get("missing") or not (b["inside"] and b["onTop"])]
    assert not bad, f"at {width}×{height} these controls cannot be clicked: {bad}"
    # The panel stays in the runs list: it does not reach over the run view or its header.
    runs_right = page.evaluate("() => document.querySelector('#runs').getBoundingClientRect().right")
    panel_right = page.evaluate("() => document.querySelector('.filters').getBoundingClientRect().right")
    head_left = page.evaluate("() => document.querySelector('.run-head').getBoundingClientRect().left")
    assert panel_right <= runs_right + 0.5 and panel_right <= head_left + 0.5
    # And each one takes a click: the checkbox filters, Clear filters clears it.
    page.locator("#filter-error").click()
    expect(page.locator("#filter-error")).to_be_checked()
    page.locator(".filter-more .filter-clear").click()
    expect(page.locator("#filter-error")).not_to_be_checked()
