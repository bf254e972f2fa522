"""A held call whose asyncio task the app cancels, seen in the viewer: the pause card goes away and
the node says it was cancelled by the app (tests/test_hub_cancelled_hold.py: the same through the API)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from _apps import AgentThread, attached_client
from playwright.sync_api import expect

import graphmind

pytestmark = pytest.mark.browser


@pytest.fixture
def client(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "cancel-app")
    try:
        yield c
    finally:
        c.dispose()


def test_a_cancelled_held_call_leaves_the_cards_and_its_node_says_so(
    hub: Any, client: Any, make_page: Any
) -> None:
    status, body = hub.api(
        "PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:lookup", "gate": "before"}]}
    )
    assert status == 200, body

    async def lookup(city: str) -> str:
        return "sunny"

    gated = client.wrap(lookup, name="lookup")
    cancel = threading.Event()

    async def agent() -> None:
        with client.run("weather"):
            call = asyncio.ensure_future(gated(city="Lisbon"))
            await asyncio.to_thread(cancel.wait)  # the test says when the app gives up
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call

    page = make_page(hub.url)
    page.goto(hub.url)
    app = AgentThread(lambda: asyncio.run(agent()))
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text("Breakpoint")
    cancel.set()
    expect(card).to_have_count(0)
    assert app.wait_pumping(page, 10), "the app did not finish"
    assert app.join().error is None
    page.locator(".run-item", has_text="weather").click()
    page.wait_for_selector("body[data-run-loaded=true]")
    page.locator(".gnode[data-node-id='tool:lookup']").click()
    expect(page.locator("#detail .d-cancelled")).to_have_text("cancelled by the app")
    expect(page.locator("#detail")).to_contain_text("before → cancelled by the app")
