"""Safe mode from the viewer (real Chromium, a real hub, a real app): the top bar's switch, turned on
while an app is attached, makes that app's next write call hold with reason `effect`; the held card
offers run it for real / simulate / inject / abort; the run's Effects tab lists what became of the
call and by whose answer; the simulated node is drawn apart from an injected one."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from _apps import AgentThread, attached_client
from playwright.sync_api import expect

import graphmind

pytestmark = pytest.mark.browser


@pytest.fixture
def clients() -> Iterator[list[graphmind.Client]]:
    made: list[graphmind.Client] = []
    yield made
    for c in made:
        c.dispose()


class Refunds:
    """An app's two tools; `issue_refund` counts its real executions."""

    def __init__(self, client: graphmind.Client) -> None:
        self.client = client
        self.refunded: list[float] = []

        @client.tool
        def lookup_order(order_id: str) -> dict[str, Any]:
            return {"order_id": order_id, "status": "delivered", "paid": 20}

        @client.tool
        def issue_refund(order_id: str, amount: float, reason: str) -> dict[str, Any]:
            self.refunded.append(amount)
            return {"refunded": amount, "order_id": order_id}

        self.lookup_order, self.issue_refund = lookup_order, issue_refund
        self.runs: list[str] = []

    def agent(self, name: str, amount: float) -> AgentThread:
        def body() -> Any:
            with self.client.run(name) as run:
                self.runs.append(run.run_id)
                order = self.lookup_order(order_id="A1")
                reason = "arrived broken; the customer sent photos of the cracked screen and the box"
                return self.issue_refund(order_id=order["order_id"], amount=amount, reason=reason)

        return AgentThread(body)


def _pumping_until(page: Any, check: Any, what: str, timeout: float = 5.0) -> None:
    """Wait for `check()` while Playwright keeps serving the page's requests (_apps.py,
    `wait_pumping`: the switch's PUT goes out only while the test is inside a Playwright call)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        page.wait_for_timeout(20)


def _fits(page: Any, selector: str) -> bool:
    """Nothing inside `selector` sticks out of it: no horizontal scroll, and every child box that
    is not clipped (a table cell's ellipsis) ends inside its right edge."""
    return bool(
        page.evaluate(
            """(sel) => { const el = document.querySelector(sel); if (!el) return false;
               const box = el.getBoundingClientRect();
               const clipped = (c) => c.closest('td, .json');
               return el.scrollWidth <= el.clientWidth + 1 && [...el.querySelectorAll('*')].every((c) => {
                 const r = c.getBoundingClientRect();
                 return r.width === 0 || clipped(c) || r.right <= box.right + 1; }); }""",
            selector,
        )
    )


def test_the_safe_mode_switch_holds_the_next_write_of_an_attached_app(
    hub: Any, clients: list[graphmind.Client], make_page: Any, shoot: Any
) -> None:
    page = make_page(hub.url)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(hub.url)
    expect(page.locator("#conn")).to_have_text("live")
    client = attached_client(hub, "refunds")
    clients.append(client)
    app = Refunds(client)
    # Safe mode off: the write runs for real.
    assert app.agent("before-the-switch", 20).wait_pumping(page)
    assert app.refunded == [20]
    # The switch, while the app is attached: the hub pushes it to every app at once.
    switch = page.locator("#safe-mode")
    switch.select_option("hold")
    expect(switch).to_have_value("hold")
    _pumping_until(
        page, lambda: hub.api("GET", "/api/debug")[1]["safe"] == "hold", "the hub to keep safe mode"
    )
    _pumping_until(page, lambda: client._hub.debug.safe == "hold", "the app to get safe mode")
    agent = app.agent("after-the-switch", 30)
    card = page.locator(".gate-card")
    expect(card).to_have_count(1)
    expect(card.locator(".gate-reason")).to_have_text("Safe mode: a write call, held before it runs")
    expect(card.locator(".gate-effect")).to_contain_text("write")
    expect(card.locator(".gate-effect")).to_contain_text("name rule")
    [gate] = hub.api("GET", "/api/gates")[1]["gates"]
    assert (gate["nodeId"], gate["gate"], gate["reason"]) == ("tool:issue_refund", "before", "effect")
    assert app.refunded == [20]  # held before its body
    for name in ("Run it for real", "Simulate", "Inject", "Abort", "Simulate like this from now on…"):
        expect(card.get_by_role("button", name=name, exact=True)).to_be_visible()
    assert _fits(page, ".gates"), "the held effect card overflows its panel"
    shoot(page, "effect-held-card-1280x720")
    # Simulate like this from now on: this call and every later one return the value given.
    card.get_by_role("button", name="Simulate like this from now on…").click()
    expect(card).to_have_attribute("data-stub-ready", "true")
    stub = '{"refunded": 0, "note": "simulated"}'
    page.get_by_label("Simulated value (JSON)").fill(stub)
    page.get_by_label("Simulated value (JSON)").press("Control+Enter")
    assert agent.wait_pumping(page)
    assert agent.error is None and agent.result == {"refunded": 0, "note": "simulated"}
    assert app.refunded == [20]  # simulated: the body never ran
    # Simulate writes: no hold at all, the tool's stub comes back (the hub's switch, this app).
    switch.select_option("simulate")
    _pumping_until(page, lambda: client._hub.debug.safe == "simulate", "the app to get simulate")
    third = app.agent("simulated-by-the-switch", 40)
    assert third.wait_pumping(page)
    assert third.result == {"refunded": 0, "note": "simulated"} and app.refunded == [20]
    expect(page.locator(".gate-card")).to_have_count(0)
    # The run's Effects tab: the simulated refund, by the viewer's answer.
    page.goto(f"{hub.url}/#/run/{app.runs[1]}")
    page.get_by_role("button", name="Effects", exact=True).click()
    ledger = page.locator(".effects")
    expect(ledger.locator(".effects-verdict")).to_contain_text("0 writes ran")
    row = ledger.locator(".effect-row")
    expect(row).to_have_count(1)
    expect(row.locator(".outcome-chip")).to_have_text("simulated")
    expect(row.locator(".effect-by")).to_have_text("the viewer")
    ledger_json = hub.api("GET", f"/api/runs/{app.runs[1]}/effects")[1]["effects"][0]
    assert (ledger_json["simulatedFrom"], ledger_json["output"]) == (
        "hub",
        {"refunded": 0, "note": "simulated"},
    )
    expect(row.locator(".effect-input")).to_contain_text('"amount":30')
    shoot(page, "effects-ledger-1280x720")
    assert _fits(page, ".effects"), "the ledger overflows its tab"
    # The graph draws the simulated node apart from an injected one.
    page.get_by_role("button", name="Graph", exact=True).click()
    node = page.locator('.gnode[data-node-id="tool:issue_refund"]')
    expect(node).to_have_class(re.compile(r"\bsimulated\b"))
    expect(node).not_to_have_class(re.compile(r"state-injected"))
    expect(node.locator(".g-state")).to_contain_text("simulated")
    expect(node).to_have_attribute("title", re.compile(r"effect: write · name rule \(\*refund\*\)"))
    shoot(page, "simulated-node-1280x720")
    # The first run's ledger: the write ran (safe mode was off).
    page.goto(f"{hub.url}/#/run/{app.runs[0]}")
    page.get_by_role("button", name="Effects", exact=True).click()
    expect(page.locator(".effects-verdict")).to_contain_text("1 write ran")
    expect(page.locator(".effect-row .outcome-chip")).to_have_text("ran")
    third_ledger = hub.api("GET", f"/api/runs/{app.runs[2]}/effects")[1]
    assert [(e["outcome"], e["by"], e["simulatedFrom"]) for e in third_ledger["effects"]] == [
        ("simulated", "safe mode", "stub")
    ]
