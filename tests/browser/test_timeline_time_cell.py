"""The timeline's time cell stays on one line at 1280×720 with the cost column shown: a minute and
more is written compactly ("1m 0s", "2m 0s", "1h 2m"), the full figure in its title."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from graphmind_server.testing import FakeApp, wait_for

pytestmark = pytest.mark.browser
RAN = {"m0": 60_000.0, "m1": 119_700.0, "m2": 3_725_000.0, "m3": 59_000.0}


def test_a_minute_long_call_keeps_its_row_one_line(hub: Any, make_page: Any) -> None:
    with FakeApp(hub.ingest_url, app="slow") as app:
        app.run_started("r1", "slow")
        for iid, ran in RAN.items():
            app.event("node.started", "r1", nodeId="llm:step", instanceId=iid, kind="llm", name="step",
                      input={"messages": [{"role": "user", "content": "go"}]}, attrs={"model": "gpt-4o"})  # fmt: skip
            app.event("node.finished", "r1", nodeId="llm:step", instanceId=iid, durationMs=ran, heldMs=0,
                      output={"text": "ok"}, usage={"inputTokens": 1200, "outputTokens": 300, "costUsd": 0.0123})  # fmt: skip
        app.run_finished("r1")
        wait_for(lambda: hub.api("GET", "/api/runs/r1")[1].get("eventCount") == 10, 30, "the run stored")
    page = make_page(hub.url)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{hub.url}/#/run/r1")
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator(".tl-row .tl-cost").filter(has_text="$0.01")).to_have_count(4)
    cells = page.evaluate(
        """() => [...document.querySelectorAll('.tl-row')].filter((r) => r.querySelector('.tl-cost').textContent)
            .map((r) => { const c = r.querySelector('.tl-time'); const range = document.createRange(); range.selectNodeContents(c);
              return [c.textContent, range.getClientRects().length, c.scrollWidth <= c.clientWidth, c.title]; })"""
    )
    assert sorted(cells) == sorted(
        [
            ["1m 0s", 1, True, "1 min 0 s"],
            ["2m 0s", 1, True, "2 min 0 s"],
            ["1h 2m", 1, True, "62 min 5 s"],
            ["59.0 s", 1, True, "59.0 s"],
        ]
    ), cells
    page.close()
