"""An assistant's proposed answer on the gate card, in real Chromium: `graphmind mcp`'s
propose_answer (the mcp SDK's client over stdio) shows on the card with its reason; Accept retries
the call through the gate-answer path and the run finishes; the node detail keeps who accepted it."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import anyio
import pytest
from _apps import AgentThread, CountingTool, attached_client
from mcp import ClientSession, StdioServerParameters, stdio_client
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

WHY = "The search backend was down for a moment; a retry usually succeeds."


def propose(hub: Any, gate_id: str) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "graphmind_server", "mcp", "--db", str(hub.db), "--port", str(hub.port)],
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(
                "propose_answer", {"gate_id": gate_id, "action": "retry", "why": WHY}
            )
            assert not result.is_error, result.content[0].text
            return dict(json.loads(result.content[0].text)["proposal"])

    # Playwright's sync API owns this thread's event loop: the MCP client runs on a thread of its own.
    out: dict[str, Any] = {}

    def target() -> None:
        out["proposal"] = anyio.run(go)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(60)
    return dict(out["proposal"])


def test_a_proposed_retry_shows_on_the_card_and_accept_retries_the_call(hub: Any, make_page: Any) -> None:
    status, _ = hub.api("PUT", "/api/debug", {"pauseOnError": "on"})
    assert status == 200
    client = attached_client(hub, "proposal-app")
    try:
        tool = CountingTool({"hits": ["second time lucky"]}, fail_first=1)
        search = client.wrap(tool, name="search")

        def body() -> Any:
            with client.run("ticket-p"):
                return search(q="lisbon")

        agent = AgentThread(body)
        page = make_page(hub.url)
        page.goto(hub.url)
        card = page.locator(".gate-card")
        expect(card.locator(".gate-reason")).to_have_text("Error: search backend is down")
        gate = hub.held_gates(1)[0]
        proposal = propose(hub, gate["gateId"])
        offer = card.locator(".gate-proposal")
        expect(offer).to_contain_text("Assistant proposes: retry the call")
        expect(offer.locator(".gate-proposal-why")).to_have_text(WHY)
        assert len(tool.calls) == 1, "a proposal alone retried the call"
        offer.get_by_role("button", name="Accept").click()
        expect(card).to_have_count(0)
        assert agent.wait_pumping(page, 10), hub.api("GET", "/api/gates")
        agent.join()
        assert agent.error is None and agent.result == {"hits": ["second time lucky"]}
        assert len(tool.calls) == 2
        decided = hub.api("GET", f"/api/proposals?runId={gate['runId']}")[1]["proposals"]
        assert [(p["id"], p["status"], p["decidedBy"]) for p in decided] == [
            (proposal["id"], "accepted", "viewer")
        ]
        # Kept on the node: its detail lists the proposal and who accepted it.
        page.locator(".run-item", has_text="ticket-p").click()
        page.wait_for_selector("body[data-run-loaded=true]")
        page.locator(".gnode[data-node-id='tool:search']").click()
        expect(page.locator("#detail .d-proposals")).to_contain_text("retry · accepted by the viewer")
        expect(page.locator("#detail .d-proposals")).to_contain_text(WHY)
    finally:
        client.dispose()
