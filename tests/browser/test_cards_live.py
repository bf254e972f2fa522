"""Issue 30's viewer acceptance against the real hub and real apps: what is typed on the pause card
is what the app's call receives, and the node detail shows what changed.

- a `wrap`ped tool held before: "Edit input" on the card, the tool gets the edit, the run shows
  the original against the edited input as a diff;
- a tool raising at its error gate: "Retry with…" an edited input, both attempts in the detail;
- "Reload code and retry" after the tool's source file was fixed; a broken rewrite is refused on the
  card with the import error;
- an MCP tool (the real mcp-server-time, in process) whose inject fails its `outputSchema`: the card
  shows the gate held again with the validation message.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _apps import AgentThread, CountingTool, attached_client
from playwright.sync_api import expect

import graphmind

pytestmark = pytest.mark.browser

MCP_TESTS = Path(__file__).resolve().parents[2] / "packages" / "graphmind-mcp" / "tests"


@pytest.fixture
def client(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "cards-live")
    try:
        yield c
    finally:
        c.dispose()


def set_debug(hub: Any, **state: Any) -> None:
    status, body = hub.api("PUT", "/api/debug", state)
    assert status == 200, body


def finish(agent: AgentThread, hub: Any, page: Any) -> AgentThread:
    if not agent.wait_pumping(page, 15):
        raise AssertionError(
            f"the agent did not finish; hub gates: {hub.api('GET', '/api/gates')}; "
            f"page cards: {page.locator('.gate-card').all_inner_texts()}"
        )
    return agent.join()


def open_node(page: Any, run: str, node_id: str) -> Any:
    page.locator(".run-item", has_text=run).click()
    page.wait_for_selector("body[data-run-loaded=true]")
    page.locator(f".gnode[data-node-id='{node_id}']").click()
    return page.locator("#detail")


def test_edit_a_held_tools_input_from_the_card_and_the_run_shows_the_diff(
    hub: Any, client: graphmind.Client, make_page: Any
) -> None:
    set_debug(hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    tool = CountingTool({"hits": ["porto"]})
    search = client.wrap(tool, name="search")

    def body() -> Any:
        with client.run("edit-live"):
            return search(q="lisbon")

    agent = AgentThread(body)
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    card.get_by_role("button", name="Edit input").click()
    expect(card).to_have_attribute("data-edit-ready", "true")
    box = page.get_by_label("Edited input (JSON)")
    assert json.loads(box.input_value()) == {"q": "lisbon"}
    box.fill('{"q": "porto"}')
    expect(card.locator(".box-edit .answer-check")).to_have_text("Valid JSON · 2 lines differ from the input")
    card.locator(".box-edit").get_by_role("button", name="Send").click()
    finish(agent, hub, page)
    assert agent.error is None, agent.error
    assert tool.calls == [{"q": "porto"}]  # the real call ran with the edit
    detail = open_node(page, "edit-live", "tool:search")
    expect(detail.locator("h3", has_text="Input (edited)")).to_be_visible()
    diff = detail.locator(".d-edited .jd-lines")
    expect(diff.locator(".jd-del")).to_have_text(['-   "q": "lisbon"'])
    expect(diff.locator(".jd-add")).to_have_text(['+   "q": "porto"'])
    expect(detail.locator(".d-exec-item")).to_contain_text("edited")
    expect(page.locator(".gnode[data-node-id='tool:search']")).to_contain_text("ok · edited")


def test_retry_with_an_edited_input_keeps_both_attempts_in_the_node_detail(
    hub: Any, client: graphmind.Client, make_page: Any
) -> None:
    set_debug(hub, pauseOnError="on")
    tool = CountingTool({"hits": ["found"]}, fail_first=1)
    search = client.wrap(tool, name="search")

    def body() -> Any:
        with client.run("retry-live"):
            return search(q="lisbon")

    agent = AgentThread(body)
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text("Error: search backend is down")
    page.keyboard.press("e")
    expect(card).to_have_attribute("data-edit-ready", "true")
    box = page.get_by_label("Input for the retry (JSON)")
    assert json.loads(box.input_value()) == {"q": "lisbon"}
    box.fill('{"q": "lisbon, portugal"}')
    box.press("Control+Enter")
    finish(agent, hub, page)
    assert agent.error is None, agent.error
    assert tool.calls == [{"q": "lisbon"}, {"q": "lisbon, portugal"}]
    detail = open_node(page, "retry-live", "tool:search")
    attempts = detail.locator(".d-attempt")
    expect(attempts).to_have_count(2)
    expect(attempts.nth(0)).to_contain_text("Attempt 1")
    expect(attempts.nth(0)).to_contain_text("ValueError: search backend is down")
    attempts.nth(0).locator("summary", has_text="Input").click()
    expect(attempts.nth(0)).to_contain_text('"lisbon"')
    expect(attempts.nth(1)).to_contain_text("Attempt 2 · ok")
    expect(detail.locator(".d-edited .jd-lines .jd-add")).to_have_text(['+   "q": "lisbon, portugal"'])


def test_reload_code_and_retry_from_the_card_runs_the_fixed_source(
    hub: Any, client: graphmind.Client, make_page: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "cards_reload_tool.py"
    module.write_text("def lookup(city: str) -> str:\n    raise ValueError('bug in lookup')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "cards_reload_tool", raising=False)
    tool_module = importlib.import_module("cards_reload_tool")
    lookup = client.wrap(tool_module.lookup, name="lookup")
    # This test hub has no token: the app opts in to reload from any local user (docs/security.md).
    monkeypatch.setenv("GRAPHMIND_ALLOW_RELOAD", "1")
    set_debug(hub, pauseOnError="on")

    def body() -> Any:
        with client.run("reload-live"):
            return lookup(city="Lisbon")

    agent = AgentThread(body)
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text("Error: bug in lookup")
    # A rewrite that does not import is refused: the gate is held again, the card says why.
    module.write_text("def lookup(city: str) -> str:\n    return 'sunny in ' + city +\n")
    card.get_by_role("button", name="Reload code and retry").click()
    expect(card.locator(".gate-refused")).to_contain_text("SyntaxError")
    module.write_text("def lookup(city: str) -> str:\n    return 'sunny in ' + city\n")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("Shift+R")
    finish(agent, hub, page)
    assert agent.error is None, agent.error
    assert agent.result == "sunny in Lisbon"


def test_an_mcp_inject_that_fails_the_output_schema_is_shown_on_the_card(
    hub: Any, client: graphmind.Client, make_page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp.client import Client

    from graphmind_mcp import instrument_mcp

    monkeypatch.syspath_prepend(str(MCP_TESTS))
    from mcp_time_server import time_server

    fake_time = {
        "timezone": "UTC",
        "datetime": "2001-02-03T04:05:06+00:00",
        "day_of_week": "Saturday",
        "is_dst": False,
    }
    set_debug(hub, breakpoints=[{"nodeId": "tool:get_current_time", "gate": "before"}])

    async def host() -> Any:
        async with Client(time_server(), mode="legacy") as mcp:
            instrument_mcp(mcp.session, session=client)
            await mcp.session.list_tools()  # as a host does first: the adapter learns the outputSchema
            with client.run("mcp-live"):
                result = await mcp.session.call_tool("get_current_time", {"timezone": "UTC"})
            return result.structured_content

    agent = AgentThread(lambda: asyncio.run(host()))
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-refused")).to_have_count(0)
    card.get_by_role("button", name="Inject").click()
    expect(card).to_have_attribute("data-inject-ready", "true")
    box = page.get_by_label("Inject value (JSON)")
    # Nothing returned yet: the box starts with a skeleton of the tool's outputSchema.
    assert set(json.loads(box.input_value())) == {"timezone", "datetime", "day_of_week", "is_dst"}
    box.fill('{"timezone": "UTC"}')
    card.locator(".box-inject").get_by_role("button", name="Send").click()
    # The app refused it and held the gate again: a new card, with the validation message on it.
    refused = page.locator(".gate-card .gate-refused")
    expect(refused).to_contain_text("Your last answer was refused:")
    expect(refused).to_contain_text("'datetime' is a required property")
    status, gates = hub.api("GET", "/api/gates")
    assert status == 200 and "'datetime' is a required property" in gates["gates"][0]["refused"]
    card.get_by_role("button", name="Inject").click()
    expect(card).to_have_attribute("data-inject-ready", "true")
    box = page.get_by_label("Inject value (JSON)")
    box.fill(json.dumps(fake_time))
    card.locator(".box-inject").get_by_role("button", name="Send").click()
    finish(agent, hub, page)
    assert agent.error is None, agent.error
    assert agent.result == fake_time
