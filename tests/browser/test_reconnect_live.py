"""The live feed against the real hub: the page reconnects by itself when the hub restarts and
catches up on what was stored while it was away."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from graphmind_server.testing import FakeApp, wait_for

pytestmark = pytest.mark.browser


def tool_call(app: FakeApp, run_id: str, call_id: str, started: bool = True) -> None:
    node = {"nodeId": "tool:search", "instanceId": call_id, "kind": "tool", "name": "search"}
    if started:
        app.event("node.started", run_id, **node, parentInstanceId=run_id, input={"q": call_id})
    else:
        app.event("node.finished", run_id, **node, output={"hits": 1}, durationMs=2.0, heldMs=0)


def test_the_page_reconnects_after_a_hub_restart_and_catches_up(hub: Any, make_page: Any) -> None:
    app = FakeApp(hub.ingest_url, app="restart-app")
    app.run_started("run-1", name="restarting")
    tool_call(app, "run-1", "c1")
    tool_call(app, "run-1", "c1", started=False)
    wait_for(lambda: hub.api("GET", "/api/runs/run-1")[0] == 200, 5, "the run to be stored")

    page = make_page(hub.url, allow_console_errors=True)  # the dropped socket logs an error
    page.goto(f"{hub.url}/#/run/run-1")
    page.wait_for_selector("body[data-run-loaded=true]")
    search = page.locator(".gnode[data-node-id='tool:search']")
    expect(search).to_contain_text("×1")
    expect(page.locator("#conn")).to_have_text("live")

    app.drop()
    hub.restart()
    # The app comes back first and sends more while the page may still be away: whichever way
    # they reach it (catch-up after the cursor, or live), the page must show all of them.
    app.url = hub.ingest_url
    app.attach(replay=True)
    tool_call(app, "run-1", "c2")
    tool_call(app, "run-1", "c2", started=False)
    tool_call(app, "run-1", "c3")
    expect(page.locator("#conn")).to_have_text("live", timeout=15_000)
    expect(search).to_contain_text("×3")
    expect(search).to_contain_text("running")
    tool_call(app, "run-1", "c3", started=False)
    expect(search).to_contain_text("ok")
    app.close()


def test_events_stored_while_the_page_was_away_arrive_by_catch_up(hub: Any, make_page: Any) -> None:
    app = FakeApp(hub.ingest_url, app="away-app")
    app.run_started("run-2", name="away")
    tool_call(app, "run-2", "c1")
    wait_for(lambda: hub.api("GET", "/api/runs/run-2")[0] == 200, 5, "the run to be stored")

    # The page's live socket goes through this route: while `open` is false it is refused.
    state: dict[str, Any] = {"open": True, "sockets": [], "urls": []}

    def route(ws: Any) -> None:
        state["urls"].append(ws.url)
        if not state["open"]:
            ws.close(code=1013)
            return
        ws.connect_to_server()
        state["sockets"].append(ws)

    page = make_page(hub.url, allow_console_errors=True)
    page.route_web_socket(re.compile(r".*/api/live.*"), route)
    page.goto(f"{hub.url}/#/run/run-2")
    page.wait_for_selector("body[data-run-loaded=true]")
    search = page.locator(".gnode[data-node-id='tool:search']")
    expect(search).to_contain_text("running")

    state["open"] = False
    for ws in state["sockets"]:
        ws.close(code=1012)
    expect(page.locator("#conn")).to_contain_text("offline")
    tool_call(app, "run-2", "c1", started=False)
    tool_call(app, "run-2", "c2")
    tool_call(app, "run-2", "c2", started=False)
    wait_for(lambda: hub.api("GET", "/api/runs/run-2")[1]["eventCount"] == 5, 5, "the events to be stored")
    expect(search).to_contain_text("×1")  # the page has not seen them
    state["open"] = True
    expect(page.locator("#conn")).to_have_text("live", timeout=15_000)
    expect(search).to_contain_text("×2")
    expect(search).to_contain_text("ok")
    assert "after=" in state["urls"][-1], state["urls"]
    app.close()


def test_a_deleted_run_leaves_the_list_and_the_view(hub: Any, make_page: Any) -> None:
    with FakeApp(hub.ingest_url, app="delete-app") as app:
        app.run_started("run-3", name="doomed")
        app.run_finished("run-3")
        wait_for(lambda: hub.api("GET", "/api/runs/run-3")[0] == 200, 5, "the run to be stored")
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/run-3")
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator(".run-item")).to_have_count(1)
    assert hub.api("DELETE", "/api/runs/run-3")[0] == 200
    expect(page.locator(".run-item")).to_have_count(0)
    expect(page.locator("#run-view")).to_contain_text("This run was deleted.")
