"""Pause is a toggle the hub keeps: pressed before any app is attached, it holds the first gate of the
app started afterwards; pressed again, it is disarmed and the next run goes straight through. The
button's label says which, from the hub's state (its `pause` frame), not from the page's guess."""

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
def clients() -> Iterator[list[graphmind.Client]]:
    made: list[graphmind.Client] = []
    yield made
    for c in made:
        c.dispose()


def one_search(client: graphmind.Client, tool: CountingTool, name: str) -> AgentThread:
    search = client.wrap(tool, name="search")

    def body() -> Any:
        with client.run(name):
            return search(q="lisbon")

    return AgentThread(body)


def pause_button(page: Any) -> Any:
    return page.locator("#debug-controls").get_by_role("button", name="Pause")


def test_pause_pressed_before_the_app_starts_holds_its_first_gate(
    hub: Any, clients: list[graphmind.Client], make_page: Any, shoot: Any
) -> None:
    page = make_page(hub.url)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(hub.url)
    expect(page.locator("#conn")).to_have_text("live")
    pause_button(page).click()
    expect(pause_button(page)).to_have_text("Pause: armed")
    expect(pause_button(page)).to_have_attribute("aria-pressed", "true")
    shoot(page, "pause-armed-1280x720")
    assert hub.api("GET", "/api/gates")[1]["gates"] == []
    # Only now does an app start: the hub hands it the armed pause with its welcome.
    client = attached_client(hub, "started-later")
    clients.append(client)
    wait_for(lambda: client._hub.pause_pending, 5, "the app to get the armed pause")
    tool = CountingTool({"hits": 1})
    agent = one_search(client, tool, "first-run")
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text("Paused")
    assert tool.calls == []  # held before the call
    # The gate took the pause: the button says it is no longer armed.
    expect(pause_button(page)).to_have_text("Pause")
    expect(pause_button(page)).to_have_attribute("aria-pressed", "false")
    shoot(page, "pause-held-1280x720")
    card.get_by_role("button", name="Continue").click()
    assert agent.wait_pumping(page)
    assert agent.join().result == {"hits": 1}


def test_a_second_click_disarms_pause_and_the_next_run_goes_through(
    hub: Any, clients: list[graphmind.Client], make_page: Any
) -> None:
    page = make_page(hub.url)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(hub.url)
    expect(page.locator("#conn")).to_have_text("live")
    pause_button(page).click()
    expect(pause_button(page)).to_have_text("Pause: armed")
    pause_button(page).click()
    expect(pause_button(page)).to_have_text("Pause")
    expect(pause_button(page)).to_have_attribute("aria-pressed", "false")
    expect(page.locator(".debug-msg")).to_have_text("Pause disarmed: gates run on")
    assert hub.api("GET", "/api/pause")[1]["pause"] == {"any": False, "runs": []}
    client = attached_client(hub, "started-later")
    clients.append(client)
    tool = CountingTool({"hits": 2})
    assert one_search(client, tool, "straight-through").wait_pumping(page)
    assert len(tool.calls) == 1
    expect(page.locator(".gate-card")).to_have_count(0)
    # A page opened later reads the state from the hub: still disarmed.
    page.reload()
    expect(page.locator("#conn")).to_have_text("live")
    expect(pause_button(page)).to_have_text("Pause")


def test_a_page_opened_after_pause_was_armed_shows_it_armed(hub: Any, make_page: Any) -> None:
    assert hub.api("POST", "/api/pause", {})[0] == 200
    page = make_page(hub.url)
    page.goto(hub.url)
    expect(pause_button(page)).to_have_text("Pause: armed")
    pause_button(page).click()
    expect(pause_button(page)).to_have_text("Pause")
    assert hub.api("GET", "/api/pause")[1]["pause"] == {"any": False, "runs": []}
