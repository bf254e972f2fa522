"""A team run in the viewer, against the real hub, a real OpenAI Agents SDK app (triage hands off to
billing, which calls a tool; the loopback fake provider scripts which agent answers) and real
Chromium at 1280×720: both agents drawn as groups with the handoff arrow between them, the
per-agent share in the header, every box inside the canvas, collapse and the timeline's agent
filter (docs/viewer.md, "Teams of agents")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _apps import AgentThread, attached_client
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
TRIAGE = "Route the customer to the right agent."
BILLING = "You handle billing questions."


def _team_run(hub: Any) -> str:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    from graphmind_openai.testing import FakeOpenAI
    from graphmind_openai_agents import instrument_openai_agents, uninstrument_openai_agents

    def script(body: dict[str, Any]) -> Any:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        if messages and messages[0].get("content") == TRIAGE:
            return FakeOpenAI.tool_call("transfer_to_billing", {})
        if any(m.get("role") == "tool" and "refunded" in str(m.get("content")) for m in messages):
            return "Refund of order 7 sent."
        return FakeOpenAI.tool_call("refund", {"order": "7"})

    set_tracing_disabled(True)
    client = attached_client(hub, "team")
    try:
        with FakeOpenAI(default_reply=script) as fake:
            instrument_openai_agents(session=client)

            @function_tool
            def refund(order: str) -> str:
                """Refund an order."""
                return f"order {order} refunded"

            async def main() -> Any:
                model = OpenAIChatCompletionsModel(
                    model="gpt-4o-mini",
                    openai_client=AsyncOpenAI(base_url=fake.base_url, api_key="test-key", max_retries=0),
                )
                billing = Agent(name="billing", instructions=BILLING, tools=[refund], model=model)
                triage = Agent(name="triage", instructions=TRIAGE, handoffs=[billing], model=model)
                return await Runner.run(triage, "I was charged twice for order 7")

            # In a thread of its own: Playwright's sync API keeps a loop marked running here.
            agent = AgentThread(lambda: asyncio.run(main())).join(30)
            assert agent.error is None, agent.error
            assert agent.result.final_output == "Refund of order 7 sent."
    finally:
        uninstrument_openai_agents()
        client.dispose()
    status, body = hub.api("GET", "/api/runs?app=team")
    assert status == 200 and body["runs"], body
    return str(body["runs"][0]["id"])


def _inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return (
        inner["x"] >= outer["x"] - 0.5
        and inner["y"] >= outer["y"] - 0.5
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5
    )


def test_the_team_run_draws_each_agent_as_a_group_with_the_handoff_between(
    hub: Any, make_page: Any, shoot: Any
) -> None:
    run_id = _team_run(hub)
    page = make_page(hub.url)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{hub.url}/#/run/{run_id}")
    triage = page.locator(".agroup[data-agent='triage']")
    billing = page.locator(".agroup[data-agent='billing']")
    expect(triage).to_be_visible()
    expect(billing).to_be_visible()
    expect(triage).to_have_class("agroup state-ok")
    handoff = page.locator(".gnode[data-node-id='handoff:triage->billing']")
    expect(handoff).to_be_visible()
    expect(page.locator(".gnode[data-node-id='llm:step@billing']")).to_be_visible()
    assert page.locator("path.handoff-edge").count() == 1
    # Each agent's boxes inside its own group: triage's step and handoff, billing's step and tool.
    page.wait_for_function("() => new Promise(r => requestAnimationFrame(() => r(true)))")
    t, b = triage.bounding_box(), billing.bounding_box()
    assert t and b and t["x"] + t["width"] <= b["x"], (t, b)  # side by side, apart
    for node_id, group in (
        ("llm:step", t),
        ("handoff:triage->billing", t),
        ("llm:step@billing", b),
        ("tool:refund", b),
    ):
        box = page.locator(f".gnode[data-node-id='{node_id}']").bounding_box()
        assert box and _inside(box, group), (node_id, box, group)
    # No box outside the canvas.
    canvas = page.locator(".graph-canvas").bounding_box()
    assert canvas
    for el in page.locator(".gnode:not([hidden]), .agroup").all():
        box = el.bounding_box()
        assert box and _inside(box, canvas), (
            el.get_attribute("data-node-id") or el.get_attribute("data-agent"),
            box,
            canvas,
        )
    # The header: each agent's share, the cost included.
    share = page.locator(".run-agents-line .agent-share[data-agent='billing']")
    expect(share).to_contain_text("2 steps")
    expect(share).to_contain_text("$")
    expect(page.locator(".run-agents-line .agent-share[data-agent='triage']")).to_contain_text("1 step")
    shoot(page, "team-run-1280x720")
    # Collapse billing: its boxes go, its header stays; expand again.
    billing.locator(".ag-toggle").click()
    expect(page.locator(".gnode[data-node-id='tool:refund']")).to_be_hidden()
    expect(billing).to_have_class("agroup state-ok collapsed")
    billing.locator(".ag-toggle").click()
    expect(page.locator(".gnode[data-node-id='tool:refund']")).to_be_visible()
    # The timeline shows one agent's executions.
    page.locator(".tl-agent").select_option("billing")
    expect(page.locator(".tl-count")).to_have_text("3 executions")
    page.locator(".tl-agent").select_option("")
    # A shared tool's detail says who called; here the handoff's says whose it is.
    handoff.click()
    expect(page.locator("#detail .d-agents")).to_contain_text("agent triage")
    # Pause on handoff, beside Pause on error: the hub's debug state, which every app gets.
    page.get_by_label("Pause on handoff").check()
    page.wait_for_function("() => window.graphmindViewer.store.debug.pauseOnHandoff === 'on'")
    assert hub.api("GET", "/api/debug")[1]["pauseOnHandoff"] == "on"
