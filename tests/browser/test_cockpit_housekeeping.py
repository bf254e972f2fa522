"""Issue 32, housekeeping, against the real hub and real Chromium: the empty state says how to
connect an app to this hub; a run is exported from the page in the `graphmind record` format and
deleted from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from graphmind_server.testing import FakeApp, wait_for

pytestmark = pytest.mark.browser


def test_empty_state_then_export_and_delete_a_run_from_the_page(
    hub: Any, make_page: Any, tmp_path: Path
) -> None:
    page = make_page(hub.url)
    page.goto(hub.url)
    port = urlparse(hub.url).port
    line = f"GRAPHMIND=1 GRAPHMIND_URL=ws://127.0.0.1:{port}/ingest python your_app.py"
    expect(page.locator("#run-view .connect-line")).to_have_text(line)
    expect(page.locator("#run-view .connect-help")).to_contain_text("never put a token on a command line")

    with FakeApp(hub.ingest_url, app="house") as app:
        app.run_started("h1", name="to-export")
        app.node_started("h1", "tool:search", "t1", input={"q": "x", "api_key": "sk-secret"})
        app.node_finished("h1", "tool:search", "t1", output={"ok": True})
        app.run_finished("h1")
        wait_for(lambda: hub.api("GET", "/api/runs/h1")[1].get("status") == "finished", 10, "run stored")
    # The first run replaces the empty state.
    expect(page.locator(".run-item[data-run-id='h1']")).to_be_visible()
    expect(page.locator("#run-view .connect-help")).to_have_count(0)
    page.locator(".run-item[data-run-id='h1']").click()
    page.wait_for_selector("body[data-run-loaded=true]")
    with page.expect_download() as dl:
        page.get_by_role("button", name="Export", exact=True).click()
    path = tmp_path / "h1.jsonl"
    dl.value.save_as(path)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[0]["type"] == "graphmind.export" and lines[1]["run"]["id"] == "h1"
    assert "sk-secret" not in path.read_text()  # secret-looking keys removed, as graphmind record does
    assert len(lines) == 2 + 4

    delete = page.get_by_role("button", name="Delete")
    delete.click()
    confirm = page.get_by_role("button", name="Confirm delete")
    expect(confirm).to_be_visible()
    confirm.click()
    expect(page.locator(".run-item[data-run-id='h1']")).to_have_count(0)
    assert hub.api("GET", "/api/runs/h1")[0] == 404


def test_an_error_without_a_stack_shows_no_stray_null(hub: Any, make_page: Any) -> None:
    with FakeApp(hub.ingest_url, app="errs") as app:
        app.run_started("e1", name="fails")
        app.node_started("e1", "tool:lookup", "t1", input={"q": 1})
        app.event(
            "node.error",
            "e1",
            nodeId="tool:lookup",
            instanceId="t1",
            error={"name": "KeyError", "message": "q"},
            durationMs=1.0,
        )
        app.run_finished("e1", status="error")
        wait_for(lambda: hub.api("GET", "/api/runs/e1")[1].get("status") == "error", 10, "run stored")
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/e1/node/tool%3Alookup")
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator("#detail .d-error")).to_have_text("KeyError: q")
    box = page.locator("#detail .d-exec")
    assert "null" not in box.inner_text().split(), box.inner_text()
    # The text right after the error block is nothing (no "null" text node).
    assert (
        page.locator("#detail .d-error").evaluate(
            "el => el.nextSibling && el.nextSibling.nodeType === 3 ? el.nextSibling.textContent : ''"
        )
        == ""
    )
