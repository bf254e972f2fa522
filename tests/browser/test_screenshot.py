"""A held run, as the README shows it: a real app holds at a breakpoint; the card is on screen.

The picture is written to the test's tmp dir; with GRAPHMIND_SCREENSHOT=1 it also replaces
docs/screenshot-held-run.png."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _apps import AgentThread, attached_client
from playwright.sync_api import expect

import graphmind
from graphmind.adapter import engine_for

pytestmark = pytest.mark.browser

DOCS_PNG = Path(__file__).resolve().parents[2] / "docs" / "screenshot-held-run.png"
TOOLS = ["search_flights", "search_hotels", "book_flight", "get_weather"]


def trip_agent(client: graphmind.Client) -> AgentThread:
    def search_flights(origin: str, dest: str) -> list[dict[str, Any]]:
        return [
            {"flight": "TP1351", "from": origin, "to": dest, "price": 189},
            {"flight": "FR8353", "price": 74},
        ]

    def search_hotels(city: str, nights: int) -> list[dict[str, Any]]:
        return [{"hotel": "Casa do Rio", "perNight": 96}]

    def book_flight(flight: str, passenger: str) -> dict[str, Any]:
        return {"booked": flight, "ref": "GM-4411"}

    def get_weather(city: str) -> str:
        return "sunny"

    tools: dict[str, Callable[..., Any]] = {
        f.__name__: client.wrap(f, name=f.__name__)
        for f in (search_flights, search_hotels, book_flight, get_weather)
    }

    def step(prompt: str, text: str) -> None:
        with client.span("step", kind="llm", input={"messages": [{"role": "user", "content": prompt}]}) as s:
            for word in text.split(" "):
                time.sleep(0.002)  # paces the fake model's stream
                s.token(word + " ")
            s.output = {"text": text}
            s.usage = {
                "inputTokens": 412,
                "outputTokens": len(text.split()),
                "totalTokens": 412 + len(text.split()),
            }

    def body() -> Any:
        with client.run("plan-trip", meta={"user": "ana"}):
            engine_for(client).hint([{"nodeId": f"tool:{t}", "kind": "tool", "name": t} for t in TOOLS])
            with client.span("travel-policy", kind="retriever", input={"query": "booking limits"}) as r:
                r.output = ["Economy only under 3 h", "Book refundable fares"]
            step(
                "Find me a flight to Lisbon next Friday and a hotel for 2 nights",
                "I'll search flights from London to Lisbon first.",
            )
            tools["search_flights"](origin="LHR", dest="LIS")
            step("(tool results)", "Two options found. Now hotels for 2 nights.")
            tools["search_hotels"](city="Lisbon", nights=2)
            step("(tool results)", "Booking TP1351, the refundable fare, for Ana.")
            return tools["book_flight"](flight="TP1351", passenger="Ana Silva")

    return AgentThread(body)


def test_screenshot_of_a_held_run(hub: Any, make_page: Any, tmp_path: Path) -> None:
    status, _ = hub.api(
        "PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:book_flight", "gate": "before"}]}
    )
    assert status == 200
    client = attached_client(hub, "trip-planner", token_flush_interval=0.001)
    agent = trip_agent(client)
    try:
        page = make_page(hub.url)
        page.goto(hub.url)
        card = page.locator(".gate-card")
        expect(card.locator(".gate-reason")).to_have_text("Breakpoint")
        page.locator(".run-item", has_text="plan-trip").click()
        page.wait_for_selector("body[data-run-loaded=true]")
        page.locator(".gnode[data-node-id='llm:step']").click()
        expect(page.locator("#detail .stream-text")).to_contain_text("Booking TP1351")
        expect(page.locator(".gnode[data-node-id='tool:book_flight']")).to_contain_text("held")
        expect(page.locator(".gnode[data-node-id='tool:get_weather']")).to_contain_text("pending")
        # 1600×900 with the node detail and the held card both open: they share one column, and
        # the graph keeps most of the width (it was squeezed to ~180 px beside the timeline).
        graph, card_box = page.locator(".graph-wrap").bounding_box(), card.bounding_box()
        detail = page.locator("#detail").bounding_box()
        assert graph and card_box and detail and graph["width"] >= 700, (graph, card_box, detail)
        assert abs(card_box["x"] - detail["x"]) < 20 and card_box["y"] < detail["y"], (card_box, detail)
        timeline = page.locator(".timeline").bounding_box()
        assert timeline and timeline["y"] >= graph["y"] + graph["height"] - 1, (graph, timeline)
        page.wait_for_timeout(300)  # let the held node's pulse settle into a frame; cosmetic only
        shot = tmp_path / "held-run.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 20_000
        if os.environ.get("GRAPHMIND_SCREENSHOT") == "1":
            shutil.copyfile(shot, DOCS_PNG)
        card.get_by_role("button", name="Continue").click()
        assert agent.wait_pumping(page), "the agent did not finish after Continue"
        agent.join()
        assert agent.error is None
        assert agent.result == {"booked": "TP1351", "ref": "GM-4411"}
    finally:
        threading.Thread(target=client.dispose, daemon=True).start()
