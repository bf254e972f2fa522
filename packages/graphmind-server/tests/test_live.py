"""WS /api/live: the viewer's feed and its catch-up from a cursor."""

from __future__ import annotations

import json
import time

from websockets.sync.client import connect


def _recv_until(ws, predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    seen = []
    while True:
        frame = json.loads(ws.recv(timeout=max(0.01, deadline - time.monotonic())))
        seen.append(frame)
        if predicate(frame):
            return frame, seen


def test_hello_then_events_runs_gates_and_debug_changes(thub):
    with connect(thub.live_url) as ws:
        hello = json.loads(ws.recv(timeout=5))
        assert hello["type"] == "hello" and hello["gates"] == [] and hello["debug"]["version"] == 0
        app = thub.app(auto_resume=True)
        started = app.run_started("r1")
        frame, _ = _recv_until(ws, lambda f: f["type"] == "event")
        assert frame["runId"] == "r1" and frame["event"] == started and frame["cursor"] > hello["cursor"]
        frame, _ = _recv_until(ws, lambda f: f["type"] == "run")
        assert (
            frame["run"]["id"] == "r1"
            and frame["run"]["status"] == "running"
            and frame["run"]["heldCount"] == 0
        )
        paused = app.hold("r1", "tool:a", "i1")
        held, _ = _recv_until(ws, lambda f: f["type"] == "gate.held")
        assert held["gate"]["nodeId"] == "tool:a" and held["gate"]["gateId"].endswith(paused["gateId"])
        assert thub.api("POST", f"/api/gates/{held['gate']['gateId']}", {"action": "continue"})[0] == 200
        released, _ = _recv_until(ws, lambda f: f["type"] == "gate.released")
        assert released == {
            "type": "gate.released",
            "gateId": held["gate"]["gateId"],
            "runId": "r1",
            "action": "continue",
            "by": "hub",
        }
        thub.api("PUT", "/api/debug", {"mode": "step"})
        debug, _ = _recv_until(ws, lambda f: f["type"] == "debug")
        assert debug["debug"]["mode"] == "step"
        thub.api("DELETE", "/api/runs/r1")
        deleted, _ = _recv_until(ws, lambda f: f["type"] == "run.deleted")
        assert deleted == {"type": "run.deleted", "runId": "r1"}


def test_held_gates_are_in_hello_and_a_disconnect_releases_them(thub):
    app = thub.app()
    app.run_started("r1")
    app.hold("r1", "tool:a", "i1")
    thub.wait_for(thub.gates, what="a held gate")
    with connect(thub.live_url) as ws:
        hello = json.loads(ws.recv(timeout=5))
        assert [g["nodeId"] for g in hello["gates"]] == ["tool:a"]
        app.drop()
        released, _ = _recv_until(ws, lambda f: f["type"] == "gate.released")
        assert released["by"] == "disconnect" and released["gateId"] == hello["gates"][0]["gateId"]


def test_catch_up_after_a_cursor_sends_the_missed_events_in_order_then_live(thub):
    app = thub.app()
    app.run_started("r1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs")[1]["runs"], what="the run")
    with connect(thub.live_url) as ws:
        first_cursor = json.loads(ws.recv(timeout=5))["cursor"]
    missed = [app.node_started("r1", "tool:a", f"i{i}") for i in range(5)]
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1]["eventCount"] == 6, what="6 events")
    with connect(f"{thub.live_url}?after={first_cursor}") as ws:
        hello = json.loads(ws.recv(timeout=5))
        assert hello["cursor"] == first_cursor + 5
        events = [json.loads(ws.recv(timeout=5)) for _ in range(5)]
        assert [f["event"] for f in events] == missed
        assert [f["cursor"] for f in events] == list(range(first_cursor + 1, first_cursor + 6))
        run, _ = _recv_until(ws, lambda f: f["type"] == "run")
        assert run["run"]["eventCount"] == 6
        live = app.node_started("r1", "tool:a", "later")
        frame, _ = _recv_until(ws, lambda f: f["type"] == "event")
        assert frame["event"] == live and frame["cursor"] == first_cursor + 6


def test_a_bad_cursor_is_refused(thub):
    with connect(f"{thub.live_url}?after=soon") as ws:
        assert json.loads(ws.recv(timeout=5))["code"] == "bad_cursor"
