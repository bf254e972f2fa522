"""Issue 32, the graph follows the logic, against the real hub and real Chromium: the sequence view
lists the steps in execution order with each tool under the model step that asked for it, calls
that overlapped side by side, a bar per step (the waterfall), folding; the graph zooms and shows
full names on hover."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from graphmind_server.testing import FakeApp, wait_for

pytestmark = pytest.mark.browser


def test_the_sequence_view_nests_tools_under_their_step_and_the_graph_zooms(hub: Any, make_page: Any) -> None:
    with FakeApp(hub.ingest_url, app="seq") as app:
        app.run_started("s1", name="planner")
        step = {"nodeId": "llm:step", "kind": "llm", "name": "step"}
        app.event(
            "node.started", "s1", instanceId="m1", parentInstanceId="s1", input={"messages": []}, **step
        )
        app.event(
            "node.finished", "s1", instanceId="m1", output={"text": ""}, durationMs=5.0, heldMs=0, **step
        )
        # Two calls the step asked for, running at the same time (the second starts before the first ends).
        for call, name in (("c1", "fetch_weather_for_the_whole_itinerary"), ("c2", "fetch_prices")):
            app.event(
                "node.started",
                "s1",
                nodeId=f"tool:{name}",
                instanceId=call,
                kind="tool",
                name=name,
                parentInstanceId="m1",
                input={},
            )
        app.node_finished("s1", "tool:fetch_weather_for_the_whole_itinerary", "c1", output=1)
        app.node_finished("s1", "tool:fetch_prices", "c2", output=2)
        app.event(
            "node.started", "s1", instanceId="m2", parentInstanceId="s1", input={"messages": []}, **step
        )
        app.event(
            "node.finished", "s1", instanceId="m2", output={"text": "done"}, durationMs=5.0, heldMs=0, **step
        )
        app.run_finished("s1")
        wait_for(lambda: hub.api("GET", "/api/runs/s1")[1].get("status") == "finished", 10, "run stored")
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/s1")
    page.wait_for_selector("body[data-run-loaded=true]")

    long = page.locator(".gnode[data-node-id='tool:fetch_weather_for_the_whole_itinerary']")
    expect(long).to_have_attribute(
        "title", "fetch_weather_for_the_whole_itinerary\ntool:fetch_weather_for_the_whole_itinerary"
    )
    page.get_by_role("button", name="Zoom in").click()
    assert page.locator(".graph-canvas").evaluate("el => el.style.zoom") == "1.25"
    expect(page.locator(".zoom-level")).to_have_text("125%")

    page.get_by_role("button", name="Sequence").click()
    seq = page.locator(".sequence")
    expect(seq).to_be_visible()
    expect(page.locator(".graph")).to_be_hidden()
    top = seq.locator(":scope > .seq-list > .seq-row")
    expect(top).to_have_count(2)  # the two model steps, in order
    first = top.nth(0)
    expect(first.locator(":scope > .seq-line .seq-name")).to_have_text("step")
    nested = first.locator(".seq-parallel .seq-row")
    expect(nested).to_have_count(2)  # both calls under the step that asked for them, side by side
    expect(first.locator(".seq-parallel .chip").first).to_have_text("parallel")
    expect(first.locator(".tl-bar").first).to_be_visible()  # the waterfall bar
    first.locator(":scope > .seq-line .seq-fold").click()
    expect(first.locator(".seq-parallel")).to_have_count(0)
    expect(first).to_contain_text("2 folded")
    top.nth(1).locator(":scope > .seq-line .seq-name").click()
    expect(page.locator("#detail h2")).to_have_text("step")
