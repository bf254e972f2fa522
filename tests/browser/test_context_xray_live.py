"""Context X-ray in the viewer, against the real hub, a real OpenAI client (graphmind-openai) and the
loopback fake provider, in real Chromium at 1280×720 (docs/viewer.md, "Context X-ray"): a held
model call's card shows the breakdown bar, the part warning of a big tool result and the step
diff; the run view charts input tokens per step; dropping the tool result on the card and sending
makes the provider receive the request without it, and the node records the edit."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _apps import AgentThread, attached_client
from playwright.sync_api import expect

import graphmind

pytestmark = pytest.mark.browser

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
# A tool result of about 60 % of gpt-4's 8,192-token window: the part warning (one part above 30 %).
BIG = json.dumps(
    {
        "city": "Lisbon",
        "hourly": [f"hour {i}: 21 degrees, light wind from the north west" for i in range(300)],
    }
)


@pytest.fixture
def gm(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "xray-app")
    try:
        yield c
    finally:
        c.dispose()


def test_a_held_model_call_shows_its_window_and_dropping_the_big_tool_result_reaches_the_provider(
    hub: Any, gm: graphmind.Client, make_page: Any, shoot: Any
) -> None:
    from openai import OpenAI

    from graphmind_openai import instrument_openai
    from graphmind_openai.testing import FakeOpenAI

    status, body = hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "llm:step", "gate": "before"}]})
    assert status == 200, body
    with FakeOpenAI() as fake:
        fake.script(
            [FakeOpenAI.tool_call("get_weather", {"city": "Lisbon"}, call_id="call_w"), "Sunny in Lisbon."]
        )
        client = instrument_openai(
            OpenAI(base_url=fake.base_url, api_key="test-key", max_retries=0), session=gm
        )

        def trip() -> str | None:
            with gm.run("xray-trip"):
                messages: list[dict[str, Any]] = [
                    {"role": "system", "content": "You plan trips. Answer in one sentence."},
                    {"role": "user", "content": "What is the weather in Lisbon today?"},
                ]
                first = client.chat.completions.create(model="gpt-4", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
                call = first.choices[0].message
                messages.append(call.model_dump(exclude_none=True))
                messages.append({"role": "tool", "tool_call_id": "call_w", "content": BIG})
                second = client.chat.completions.create(model="gpt-4", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
                return second.choices[0].message.content

        agent = AgentThread(trip)
        page = make_page(hub.url)
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(hub.url)
        card = page.locator(".gate-card")
        # Step 1: the card X-rays the call (system, tool definitions, the user's question).
        expect(card.locator(".cx-bar")).to_be_visible()
        expect(card.locator(".cx-total")).to_contain_text("tokens")
        expect(card.locator(".cx-diff")).to_contain_text("First model step")
        card.get_by_role("button", name="Continue").click()
        # Step 2: the tool result is most of the window; the diff names what the step added.
        expect(card.locator(".cx-diff")).to_contain_text("+2 parts")
        expect(card.locator(".cx-diff")).to_contain_text("tool result call_w")
        expect(card.locator(".cx-warning").first).to_contain_text("tool result call_w")
        expect(card.locator(".cx-badge")).to_contain_text("context warning")
        expect(page.locator(".stepchart .sc-bar")).to_have_count(2)
        expect(page.locator(".gnode[data-node-id='llm:step'] .g-warn")).to_be_visible()
        # Readable without scrolling the card: the bar, the warning and the diff are in the viewport.
        for sel in (".cx-bar", ".cx-warning", ".cx-diff"):
            box = card.locator(sel).first.bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= 720, (sel, box)
        chart = page.locator(".stepchart").bounding_box()
        assert chart and chart["y"] + chart["height"] <= 720, chart
        shots = [shoot(page, "context-card")]

        # Surgery: "trim to fit" gives up the largest tool result first; Undo all takes it back.
        drop = card.get_by_role("button", name="Drop tool result call_w")
        card.get_by_role("button", name="Trim to fit").click()
        expect(drop).to_have_attribute("aria-pressed", "true")
        expect(card.locator(".cx-edit-status")).to_contain_text("1 dropped")
        card.get_by_role("button", name="Undo all").click()
        expect(drop).to_have_attribute("aria-pressed", "false")
        # Drop it by hand, from the keyboard: the card shows the new total before anything is sent.
        before = int(card.locator(".cx-total-n").inner_text().split()[0].replace(",", ""))
        drop.focus()
        page.keyboard.press("Enter")
        expect(drop).to_have_attribute("aria-pressed", "true")
        expect(drop).to_be_focused()
        status_line = card.locator(".cx-edit-status")
        expect(status_line).to_contain_text("New total")
        after = int(status_line.get_attribute("data-total") or "0")
        assert 0 < after < before / 2, (before, after)
        shots.append(shoot(page, "context-surgery"))
        card.get_by_role("button", name="Send edited").click()
        assert agent.wait_pumping(page, 10), f"the agent did not finish: {hub.api('GET', '/api/gates')}"
        agent.join()
        assert agent.error is None, agent.error
        assert agent.result == "Sunny in Lisbon."
        sent = fake.requests[1].body["messages"]
        # The tool result is gone (and the hub dropped the tool call it answered with it, so the
        # request stays valid).
        assert [m["role"] for m in sent][:2] == ["system", "user"] and "tool" not in [
            m["role"] for m in sent
        ], sent
        assert BIG not in json.dumps(sent)

    expect(page.locator(".gnode[data-node-id='llm:step']")).to_contain_text("edited")
    # A bar of the per-step chart selects its call: the node detail shows that call's X-ray.
    page.locator(".stepchart .sc-bar").nth(1).click()
    detail = page.locator("#detail")
    expect(detail.locator(".d-exec-item.selected")).to_contain_text("edited")
    expect(detail.locator(".cx-bar")).to_be_visible()
    expect(detail.locator(".cx-diff")).to_be_visible()
    shots.append(shoot(page, "context-detail"))
    if os.environ.get("GRAPHMIND_TEST_SHOTS"):
        print("screenshots:", *map(Path, shots))
