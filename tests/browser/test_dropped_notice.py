"""A run with gaps says so (issue 38): the real SDK bursts while the real hub is SIGSTOPped, falls
back to counted drops after the stall, and once the hub resumes the open page shows "N events were
not recorded: why" on the run, live and after a reload."""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest
from playwright.sync_api import expect

import graphmind
from graphmind._wire.backpressure import STALL_S
from graphmind_server.testing import wait_for

pytestmark = pytest.mark.browser


def test_a_run_that_lost_events_shows_how_many_and_why(hub: Any, make_page: Any) -> None:
    client = graphmind.Client(app="gappy", url=hub.ingest_url, buffer_size=200)
    assert client.ready(5)
    tool = client.wrap(lambda i, blob: i, name="burst")
    blob = "x" * 4096
    runs: list[str] = []
    started = threading.Event()
    go = threading.Event()
    done = threading.Event()

    def burst() -> None:
        with client.run("gappy") as run:
            runs.append(run.run_id)
            tool(-1, "")
            started.set()
            go.wait(30)
            for i in range(10_000):
                tool(i, blob)
        done.set()

    worker = threading.Thread(target=burst, name="burst")
    worker.start()
    assert started.wait(10)
    run_id = runs[0]
    wait_for(lambda: hub.api("GET", f"/api/runs/{run_id}")[1].get("eventCount") == 3, 10, "the run's start")
    page = make_page(hub.url, allow_console_errors=True)  # the stopped hub may time the live socket out
    page.goto(f"{hub.url}/#/run/{run_id}")
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator(".event-count")).to_have_text("3 events")
    expect(page.locator(".dropped-notice")).to_have_count(0)

    assert hub.proc is not None
    hub.proc.send_signal(signal.SIGSTOP)
    try:
        go.set()
        assert done.wait(STALL_S + 120), "the app kept running"
        lost = client.stats()["dropped"]
        assert lost > 0
    finally:
        hub.proc.send_signal(signal.SIGCONT)
    worker.join(5)
    why = "the hub took no events for a while and the app's buffer was full"
    notice = page.locator(".dropped-notice")
    expect(notice).to_have_text(f"{lost:,} events were not recorded: {why}", timeout=30_000)
    client.dispose()
    page.reload()
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator(".dropped-notice")).to_have_text(f"{lost:,} events were not recorded: {why}")
