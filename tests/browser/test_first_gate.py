"""A newcomer's first gate: the viewer opens the held run by itself, and the Inject box starts with
the shape the gate expects back (never the input at a before gate) and says what it becomes."""

from __future__ import annotations

import json
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
    c = attached_client(hub, "first-contact")
    try:
        yield c
    finally:
        c.dispose()


def hold_before(hub: Any, node_id: str) -> None:
    status, body = hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": node_id, "gate": "before"}]})
    assert status == 200, body


def searches(client: graphmind.Client, tool: CountingTool, name: str, calls: int) -> AgentThread:
    search = client.wrap(tool, name="search")

    def body() -> list[Any]:
        with client.run(name):
            return [search(q=f"lisbon {i}") for i in range(calls)]

    return AgentThread(body)


def test_a_held_gate_opens_its_run_and_graph_when_no_run_is_selected(
    hub: Any, client: Any, make_page: Any
) -> None:
    hold_before(hub, "tool:search")
    page = make_page(hub.url)
    page.goto(hub.url)
    expect(page.locator("#conn")).to_have_text("live")
    agent = searches(client, CountingTool({"hits": 1}), "ticket-open", 1)
    expect(page.locator(".gate-card")).to_have_count(1)
    expect(page.locator(".gnode[data-node-id='tool:search']")).to_be_visible()
    run_id = page.evaluate("() => window.graphmindViewer.store.runId")
    assert run_id and run_id == hub.api("GET", "/api/gates")[1]["gates"][0]["runId"]
    assert page.url.endswith(f"#/run/{run_id}")
    page.locator(".gate-card").get_by_role("button", name="Continue").click()
    assert agent.wait_pumping(page)
    assert agent.join().error is None
    # Back to the list by hand: the answered gate does not pull the page to its run again.
    page.goto(f"{hub.url}/#/")
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.graphmindViewer.store.runId") is None


def test_the_inject_box_at_a_before_gate_starts_with_the_last_output_never_the_input(
    hub: Any, client: Any, make_page: Any
) -> None:
    hold_before(hub, "tool:search")
    page = make_page(hub.url)
    page.goto(hub.url)
    tool = CountingTool({"hits": ["first result"]})
    agent = searches(client, tool, "ticket-inject", 2)
    card = page.locator(".gate-card")
    expect(card).to_contain_text("lisbon 0")
    card.get_by_role("button", name="Inject").click()
    expect(card).to_have_attribute("data-inject-ready", "true")
    # No earlier execution of this node: the box starts at null, not at {"q": "lisbon 0"}.
    assert page.get_by_label("Inject value (JSON)").input_value() == "null"
    expect(card.locator(".inject-meaning")).to_have_text(
        "Sent as the tool's return value: the call is skipped and never runs."
    )
    card.get_by_role("button", name="Continue").click()
    # The second call holds; its box starts with the node's last output (what the first call returned).
    expect(card).to_contain_text("lisbon 1")
    card.get_by_role("button", name="Inject").click()
    expect(card).to_have_attribute("data-inject-ready", "true")
    assert json.loads(page.get_by_label("Inject value (JSON)").input_value()) == {"hits": ["first result"]}
    page.get_by_role("button", name="Send").click()
    assert agent.wait_pumping(page)
    assert agent.join().result == [{"hits": ["first result"]}, {"hits": ["first result"]}]
    assert len(tool.calls) == 1


def test_the_inject_box_finds_the_last_output_of_a_run_that_is_not_open(
    hub: Any, client: Any, make_page: Any
) -> None:
    tool = CountingTool({"hits": ["earlier"]})
    assert searches(client, tool, "ticket-earlier", 1).join().error is None  # nothing held: it runs through
    # The events reach the hub from the transport thread: wait until it stored the run (no race under load).
    runs = wait_for(lambda: hub.api("GET", "/api/runs")[1]["runs"], 10, "the earlier run to be stored")
    earlier = runs[0]["id"]
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/{earlier}")  # another run is open: the held one is not opened for us
    page.wait_for_selector("body[data-run-loaded=true]")
    search = client.wrap(tool, name="search")

    def body() -> Any:
        with client.run("ticket-held"):
            search(q="a")
            hold_before(hub, "tool:search")
            return search(q="b")

    agent = AgentThread(body)
    card = page.locator(".gate-card")
    expect(card).to_contain_text("Breakpoint")
    card.get_by_role("button", name="Inject").click()
    expect(card).to_have_attribute("data-inject-ready", "true")
    assert json.loads(page.get_by_label("Inject value (JSON)").input_value()) == {"hits": ["earlier"]}
    card.get_by_role("button", name="Continue").click()
    assert agent.wait_pumping(page)
    assert agent.join().error is None
    assert page.evaluate("() => window.graphmindViewer.store.runId") == earlier


def test_the_card_says_a_hold_came_from_code_or_a_condition(hub: Any, client: Any, make_page: Any) -> None:
    page = make_page(hub.url)
    page.goto(hub.url)
    expect(page.locator("#conn")).to_have_text("live")
    book = client.wrap(lambda flight: f"booked {flight}", name="book", breakpoint="before")
    refund = client.wrap(
        lambda amount: amount,
        name="refund",
        hold_if=lambda amount: amount > 100 and f"refund of {amount} is over 100",
    )

    def body() -> list[Any]:
        with client.run("ticket-code"):
            return [book("TP-544"), refund(30), refund(250)]

    agent = AgentThread(body)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text("Breakpoint (set in code)")
    card.get_by_role("button", name="Continue").click()
    expect(card.locator(".gate-reason")).to_have_text("Condition: refund of 250 is over 100")
    card.get_by_role("button", name="Continue").click()
    assert agent.wait_pumping(page)
    assert agent.join().result == ["booked TP-544", 30, 250]
