"""A frozen hub (SIGSTOP: what a stalled machine looks like to the app) is detected by the keepalive
within its documented bound (docs/timeouts.md) and a held call continues as for a disconnect
(issue 29: it stayed blocked 39-41 s, websockets' default 20 + 20 s)."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

import graphmind
from graphmind._wire.hub_link import CLOSE_TIMEOUT_S, PING_INTERVAL_S, PING_TIMEOUT_S
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure


def test_a_held_call_returns_within_the_keepalive_bound_when_the_hub_freezes(hub: HubProcess) -> None:
    assert (
        hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:held", "gate": "before"}]})[0] == 200
    )
    client = graphmind.Client(app="frozen", url=hub.ingest_url)
    assert hub.proc is not None
    try:
        assert client.ready(5)
        tool = client.wrap(lambda: "ran", name="held")
        out: list[Any] = []
        ended = threading.Event()

        def body() -> None:
            with client.run("r"):
                out.append(tool())
            ended.set()

        threading.Thread(target=body, daemon=True).start()
        wait_for(lambda: hub.api("GET", "/api/gates")[1]["gates"], 10, "held")
        hub.proc.send_signal(signal.SIGSTOP)
        started = time.monotonic()
        try:
            assert ended.wait(PING_INTERVAL_S + PING_TIMEOUT_S + 5)
            took = time.monotonic() - started
        finally:
            hub.proc.send_signal(signal.SIGCONT)
        figure("held call with the hub SIGSTOPped", f"continues after {took:.1f} s")
        assert out == ["ran"]
        # The documented bound: a ping's interval and timeout, and websockets' close timeout.
        assert took <= PING_INTERVAL_S + PING_TIMEOUT_S + CLOSE_TIMEOUT_S + 1.0
    finally:
        client.dispose()
