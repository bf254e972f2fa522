"""Same-named runs can be told apart wherever the page names a run (the runs list, the pause card,
"Compare with…": start time, app, a short id, the app's own run meta), and a gate held in another
run than the one on screen offers its graph in one click."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _apps import AgentThread, CountingTool, attached_client
from playwright.sync_api import expect

import graphmind
from graphmind_server.testing import wait_for

pytestmark = pytest.mark.browser


@pytest.fixture
def client(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "refund-app")
    try:
        yield c
    finally:
        c.dispose()


def refund(client: graphmind.Client, ticket: str) -> AgentThread:
    search = client.wrap(CountingTool({"hits": 1}), name="search")

    def body() -> Any:
        with client.run("refund", meta={"ticket": ticket}):
            return search(q=ticket)

    return AgentThread(body)


def test_same_named_runs_differ_by_start_id_and_meta_and_a_held_gate_opens_its_run(
    hub: Any, client: graphmind.Client, make_page: Any, shoot: Any
) -> None:
    assert refund(client, "T-1").join().error is None
    first = wait_for(lambda: hub.api("GET", "/api/runs")[1]["runs"], 10, "the first run")[0]
    page = make_page(hub.url)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{hub.url}/#/run/{first['id']}")
    page.wait_for_selector("body[data-run-loaded=true]")
    status, body = hub.api(
        "PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:search", "gate": "before"}]}
    )
    assert status == 200, body
    agent = refund(client, "T-2")
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text("Breakpoint")
    held_id = hub.api("GET", "/api/gates")[1]["gates"][0]["runId"]
    assert held_id != first["id"]
    # The runs list: two "refund" rows, each with its own short id and ticket.
    rows = page.locator(".run-item", has_text="refund")
    expect(rows).to_have_count(2)
    expect(page.locator(f".run-item[data-run-id='{held_id}'] .run-facts")).to_contain_text(f"#{held_id[:8]}")
    expect(page.locator(f".run-item[data-run-id='{held_id}'] .run-facts")).to_contain_text("ticket=T-2")
    expect(page.locator(f".run-item[data-run-id='{first['id']}'] .run-facts")).to_contain_text("ticket=T-1")
    expect(page.locator(f".run-item[data-run-id='{first['id']}'] .run-facts")).to_contain_text("started ")
    # The card names its run the same way and, since that run is not on screen, offers it.
    expect(card.locator(".gate-run")).to_contain_text("refund started")
    expect(card.locator(".gate-run")).to_contain_text(f"refund-app · #{held_id[:8]} · ticket=T-2")
    # "Compare with…" lists the other run with the same facts.
    expect(page.get_by_label("Compare with run").locator("option")).to_have_count(2)
    options = page.get_by_label("Compare with run").locator("option").all_inner_texts()
    assert any(f"#{held_id[:8]}" in o and "ticket=T-2" in o and "started " in o for o in options), options
    shoot(page, "held-in-another-run-1280x720")
    show = card.get_by_role("button", name="Show its run")
    expect(show).to_be_visible()
    show.click()
    page.wait_for_selector("body[data-run-loaded=true]")
    assert page.evaluate("() => window.graphmindViewer.store.runId") == held_id
    expect(page.locator(".gnode[data-node-id='tool:search']")).to_contain_text("held")
    expect(show).to_be_hidden()  # its run is the one on screen now
    expect(page.locator(".run-head")).to_contain_text(f"#{held_id[:8]} · ticket=T-2")
    shoot(page, "held-run-opened-1280x720")
    # The keyboard does the same: `g` goes to the run of a gate held in another run.
    page.goto(f"{hub.url}/#/run/{first['id']}")
    page.wait_for_selector("body[data-run-loaded=true]")
    page.locator("body").press("g")
    page.wait_for_function(f"() => window.graphmindViewer.store.runId === {held_id!r}")
    page.wait_for_selector("body[data-run-loaded=true]")
    card.get_by_role("button", name="Continue").click()
    assert agent.wait_pumping(page)
    assert agent.join().error is None
