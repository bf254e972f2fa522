"""At 1280×720, with the demo's travel agent (graphmind-openai on the scripted model) against the real
hub: the Send button of Inject and Edit input stays in view with the node detail open, a model
step's Inject box starts with a reply, the graph fits on open (no node clipped), and costs show
their digits (never `$0.0000`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from _apps import AgentThread, attached_client
from playwright.sync_api import expect

import graphmind
from graphmind_server.demo.agent import run_travel_agent
from graphmind_server.demo.command import _instrument, _openai_client, _scripted_model
from graphmind_server.demo.travel import TravelTools
from graphmind_server.testing import FakeApp, wait_for

pytestmark = pytest.mark.browser
PRICED_MODEL = "gpt-4o-mini"  # in the hub's price table: a few hundred tokens cost a fraction of a cent

UNCOVERED = """el => {
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.left < 0 || r.top < 0 || r.right > innerWidth || r.bottom > innerHeight) return false;
  const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return top === el || el.contains(top);
}"""


@pytest.fixture
def gm(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "travel")
    try:
        yield c
    finally:
        c.dispose()


def travel_agent(gm: graphmind.Client) -> AgentThread:
    def body() -> Any:
        with _scripted_model(False) as model:
            client = _instrument(_openai_client(False, model.base_url), gm)
            return run_travel_agent(client, gm, TravelTools(), model=PRICED_MODEL, run_name="trip")

    return AgentThread(body)


def laptop_page(make_page: Any, url: str) -> Any:
    page = make_page(url)
    page.set_viewport_size({"width": 1280, "height": 720})
    return page


def test_send_stays_in_view_with_node_detail_open_and_a_model_steps_inject_starts_with_a_reply(
    hub: Any, gm: graphmind.Client, make_page: Any, shoot: Any
) -> None:
    status, body = hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "llm:step", "gate": "before"}]})
    assert status == 200, body
    page = laptop_page(make_page, hub.url)
    page.goto(hub.url)
    expect(page.locator("#conn")).to_have_text("live")
    agent = travel_agent(gm)
    card = page.locator(".gate-card")
    wait_for(lambda: page.locator(".gate-card").count() or agent.done.is_set(), 20, "the held model step")
    assert not agent.done.is_set(), f"the agent ended without holding: {agent.error!r}"
    expect(card.locator(".gate-reason")).to_have_text("Breakpoint")
    page.locator(".gnode[data-node-id='llm:step']").click()
    expect(page.locator("#detail h2")).to_have_text("step")
    # The first model step: graphmind-openai sends a reply skeleton (the offered tools); a reply shape.
    card.get_by_role("button", name="Inject").click()
    expect(card).to_have_attribute("data-inject-ready", "true")
    box = card.locator(".box-inject")
    assert set(json.loads(box.locator("textarea").input_value())) == {"content", "tool_calls"}
    send = box.get_by_role("button", name="Send")
    page.wait_for_function(UNCOVERED, arg=send.element_handle())
    shoot(page, "inject-with-detail-1280x720")
    box.get_by_role("button", name="Cancel").click()
    card.get_by_role("button", name="Edit input").click()
    edit = card.locator(".box-edit")
    expect(edit).to_have_attribute("data-ready", "true")
    page.wait_for_function(UNCOVERED, arg=edit.get_by_role("button", name="Send").element_handle())
    shoot(page, "edit-input-with-detail-1280x720")
    edit.get_by_role("button", name="Cancel").click()
    assert hub.api("PUT", "/api/debug", {"breakpoints": []})[0] == 200
    card.get_by_role("button", name="Continue").click()
    assert agent.wait_pumping(page, 20)
    assert agent.join().error is None


def test_the_graph_fits_on_open_and_costs_show_their_digits(
    hub: Any, gm: graphmind.Client, make_page: Any, shoot: Any
) -> None:
    assert travel_agent(gm).join(20).error is None
    run = wait_for(
        lambda: next((r for r in hub.api("GET", "/api/runs")[1]["runs"] if r["status"] == "finished"), None),
        10,
        "the finished run",
    )
    run = wait_for(
        lambda: (r := hub.api("GET", f"/api/runs/{run['id']}")[1])["usage"]["costUsd"] and r, 10, "a cost"
    )
    assert 0 < run["usage"]["costUsd"] < 0.0001, run["usage"]  # what used to show as $0.0000
    page = laptop_page(make_page, hub.url)
    page.goto(f"{hub.url}/#/run/{run['id']}/node/llm%3Astep")
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator("#detail h2")).to_have_text("step")
    page.wait_for_timeout(300)  # the fit runs after the layout's frame
    shoot(page, "fit-on-open-1280x720")
    # Every node, its title and its status, inside the graph's visible area (under its toolbar).
    clipped = page.evaluate("""() => {
      const wrap = document.querySelector('.graph-wrap').getBoundingClientRect();
      const bar = document.querySelector('.view-switch').getBoundingClientRect();
      const top = bar.bottom, bottom = wrap.bottom, left = wrap.left, right = wrap.right;
      const out = [];
      for (const el of document.querySelectorAll('.gnode')) {
        for (const part of [el.querySelector('.g-name'), el.querySelector('.g-state')]) {
          const r = part.getBoundingClientRect();
          if (r.top < top - 0.5 || r.bottom > bottom + 0.5 || r.left < left - 0.5 || r.right > right + 0.5)
            out.push(`${el.dataset.nodeId} ${part.className} ${Math.round(r.top)}..${Math.round(r.bottom)} not in ${Math.round(top)}..${Math.round(bottom)}`);
        }
      }
      return out;
    }""")
    assert page.locator(".gnode").count() >= 4
    assert clipped == [], clipped
    # Costs: the run's in the list, and this node's, with enough digits to read.
    usage = page.locator(f".run-item[data-run-id='{run['id']}'] .run-usage")
    expect(usage).to_contain_text("$0.0000")
    assert re.search(r"\$0\.0000[1-9]", usage.inner_text()), usage.inner_text()
    expect(page.locator("#detail .d-cost")).to_have_text(re.compile(r"^≈ \$0\.0000[1-9]\d?$"))
    expect(page.locator("#detail .d-node-cost")).to_have_text(re.compile(r"cost ≈ \$0\.0000[1-9]\d?$"))
    money = page.evaluate("""async () => { const { money } = await import('/js/usage.js');
      return [0, 0.0000123, 0.000042, 0.0042, 0.0151, 1.5, 0.000000001].map(money); }""")
    assert money == ["$0", "$0.000012", "$0.000042", "$0.0042", "$0.02", "$1.50", "< $0.00000001"]
    # The fork command runs the app with the interpreter the run recorded, else `python`.
    commands = page.evaluate("""async () => { const { forkCommand } = await import('/js/fork.js');
      const base = { runId: 'r1', selector: 'tool:search#1', which: 'output', value: [] };
      return [
        forkCommand({ ...base, meta: { argv: ['agent.py'], cwd: '/srv/app', executable: '/srv/app/.venv/bin/python' } }),
        forkCommand({ ...base, meta: { argv: ['agent.py'], cwd: '/srv/app' } }),
      ]; }""")
    assert commands == [
        "cd /srv/app && graphmind replay r1 --fork 'tool:search#1' --output '[]' -- /srv/app/.venv/bin/python agent.py",
        "cd /srv/app && graphmind replay r1 --fork 'tool:search#1' --output '[]' -- python agent.py",
    ]


def test_a_first_model_step_without_a_skeleton_from_its_app_starts_inject_with_an_empty_reply(
    hub: Any, make_page: Any
) -> None:
    app = FakeApp(hub.ingest_url, app="no-skeleton", auto_resume=True)
    try:
        app.event(
            "run.started",
            "r-llm",
            name="chat",
            app=app.app,
            nodeId="agent:chat",
            instanceId="r-llm",
            kind="agent",
            implicit=False,
            meta={},
        )
        messages = {"messages": [{"role": "user", "content": "Book Lisbon"}]}
        app.node_started("r-llm", "llm:step", "s1", input=messages)
        app.hold("r-llm", "llm:step", "s1", input=messages)
        page = laptop_page(make_page, hub.url)
        page.goto(hub.url)
        card = page.locator(".gate-card")
        card.get_by_role("button", name="Inject").click()
        expect(card).to_have_attribute("data-inject-ready", "true")
        # Not null: the one reply shape every adapter reads (docs/protocol.md), empty.
        assert json.loads(card.locator(".box-inject textarea").input_value()) == {
            "content": "",
            "tool_calls": [],
        }
        expect(card.locator(".inject-meaning")).to_contain_text('"tool_calls"')
    finally:
        app.close()
