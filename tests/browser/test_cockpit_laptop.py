"""Issue 32, a laptop screen, against the real hub, a real app and real Chromium: at 1280×720, with
a run held on its 4th tool, the held node and the card's Continue button are both visible (in the
viewport, and not covered by anything), with the node detail closed and open; the timeline no
longer covers the graph."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from _apps import AgentThread, attached_client
from playwright.sync_api import expect

import graphmind

pytestmark = pytest.mark.browser
TOOLS = ["search_flights", "search_hotels", "check_budget", "book_flight", "book_hotel", "send_receipt"]


@pytest.fixture
def gm(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "laptop")
    try:
        yield c
    finally:
        c.dispose()


def uncovered(page: Any, locator: Any) -> bool:
    """Inside the viewport, and the topmost element at its centre is itself (or inside it)."""
    return bool(
        locator.evaluate("""el => {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.left < 0 || r.top < 0 || r.right > innerWidth || r.bottom > innerHeight) return false;
        const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return top === el || el.contains(top);
    }""")
    )


def test_at_1280x720_the_held_4th_tool_and_continue_are_visible(
    hub: Any, gm: graphmind.Client, browser: Any, make_page: Any
) -> None:
    status, _ = hub.api(
        "PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:book_flight", "gate": "before"}]}
    )
    assert status == 200
    tools = gm.wrap_tools({name: (lambda name=name, **kw: {"done": name}) for name in TOOLS})

    def body() -> None:
        with gm.run("laptop-trip"):
            for name in TOOLS:
                tools[name](city="berlin")

    agent = AgentThread(body)
    page = make_page(hub.url)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(hub.url)  # the held run opens by itself
    held = page.locator(".gnode[data-node-id='tool:book_flight']")
    # held, whatever else it carries (an effect class such as effect-write comes with the classified tool)
    expect(held).to_have_class(re.compile(r"\bkind-tool\b.*\bstate-held\b"))
    cont = page.locator(".gate-card").get_by_role("button", name="Continue")
    expect(cont).to_be_visible()
    page.wait_for_selector("body[data-graph-drawn=true]")
    for _ in range(2):  # the detail panel closed, then open
        page.wait_for_function("() => new Promise(r => requestAnimationFrame(() => r(true)))")
        assert uncovered(page, held), held.bounding_box()
        assert uncovered(page, cont), cont.bounding_box()
        # The timeline sits beside or under the graph, never over it.
        g = page.locator(".graph-wrap").bounding_box()
        t = page.locator(".timeline").bounding_box()
        assert g and t and (t["y"] >= g["y"] + g["height"] - 1 or t["x"] >= g["x"] + g["width"] - 1), (g, t)
        page.locator(".gnode[data-node-id='tool:search_flights']").click()
        expect(page.locator("#detail h2")).to_have_text("search_flights")
    # Collapse the runs list: the graph gets its width; the held node and Continue stay in view.
    before = page.locator(".graph-wrap").bounding_box()
    page.get_by_role("button", name="Runs list").click()
    expect(page.locator("#runs")).to_be_hidden()
    after = page.locator(".graph-wrap").bounding_box()
    assert before and after and after["width"] > before["width"] + 200, (before, after)
    page.wait_for_function("() => new Promise(r => requestAnimationFrame(() => r(true)))")
    assert uncovered(page, cont)
    page.get_by_role("button", name="Runs list").click()
    expect(page.locator("#runs")).to_be_visible()
    cont.click()
    assert agent.wait_pumping(page, 10)
    agent.join()
    assert agent.error is None
