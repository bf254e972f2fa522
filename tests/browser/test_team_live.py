"""A team run live in the viewer (docs/viewer.md, "Teams of agents"), on the core API alone: two
agents call the same tool, billing's call held. The held agent's lane says `held` and the other's
does not (the node rule over a group), the shared tool's detail names who made each call, and the
timeline shows one agent's executions; real hub, real Chromium at 1280×720."""

from __future__ import annotations

from typing import Any

import pytest
from _apps import AgentThread, attached_client
from playwright.sync_api import expect

from graphmind.adapter import agent_scope, engine_for, handoff

pytestmark = pytest.mark.browser


def test_a_held_agent_lane_and_a_shared_tool(hub: Any, make_page: Any, shoot: Any) -> None:
    gm = attached_client(hub, "team-live")
    try:
        hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:lookup", "gate": "before"}]})
        lookup = gm.wrap(
            lambda order: f"order {order}",
            name="lookup",
            hold_if=lambda order, agent=None: agent == "billing",
        )

        def body() -> None:
            with gm.run("support"), agent_scope("triage"):
                lookup("7")
                decided = handoff(engine_for(gm), "triage", "billing", {"task": "refund 7"})
                with agent_scope("billing"):
                    lookup(decided.input["task"])

        hub.api("PUT", "/api/debug", {"breakpoints": []})  # only the hold_if holds: billing's call
        agent = AgentThread(body)
        page = make_page(hub.url)
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(hub.url)  # the held run opens by itself
        billing = page.locator(".agroup[data-agent='billing']")
        expect(billing).to_have_class("agroup state-held")
        expect(page.locator(".agroup[data-agent='triage']")).to_have_class("agroup state-ok")
        expect(page.locator("path.handoff-edge")).to_have_count(1)
        shoot(page, "team-live-held-1280x720")
        page.locator(".gnode[data-node-id='tool:lookup']").click()
        expect(page.locator("#detail .d-agents")).to_have_text(" · agents triage, billing")
        expect(page.locator("#detail .d-exec-item").first).to_contain_text("by billing")
        expect(page.locator("#detail .d-exec-item").nth(1)).to_contain_text("by triage")
        page.locator(".tl-agent").select_option("triage")
        expect(page.locator(".tl-count")).to_have_text("2 executions")
        page.locator(".gate-card").get_by_role("button", name="Continue").click()
        assert agent.wait_pumping(page, 10)
        agent.join()
        assert agent.error is None, agent.error
        expect(billing).to_have_class("agroup state-ok")
    finally:
        gm.dispose()


def test_pause_on_handoff_holds_the_handoff_and_an_inject_answers_for_the_target(
    hub: Any, make_page: Any
) -> None:
    gm = attached_client(hub, "team-handoff")
    billed: list[Any] = []
    try:
        page = make_page(hub.url)
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(hub.url)
        page.get_by_label("Pause on handoff").check()
        page.wait_for_function("() => window.graphmindViewer.store.debug.pauseOnHandoff === 'on'")

        def body() -> Any:
            with gm.run("support"), agent_scope("triage"):
                decided = handoff(
                    engine_for(gm), "triage", "billing", {"task": "refund 7"}, call=billed.append
                )
                return decided.output

        agent = AgentThread(body)
        card = page.locator(".gate-card")
        expect(card.locator(".gate-reason")).to_contain_text("Handoff: triage → billing")
        card.get_by_role("button", name="Inject").click()
        expect(card).to_have_attribute("data-inject-ready", "true")
        page.get_by_label("Inject value (JSON)").fill('"refunded by a person"')
        page.get_by_role("button", name="Send").click()
        expect(card).to_have_count(0)
        assert agent.wait_pumping(page, 10)
        agent.join()
        assert agent.error is None, agent.error
        assert agent.result == "refunded by a person" and billed == []  # billing never ran
    finally:
        gm.dispose()
