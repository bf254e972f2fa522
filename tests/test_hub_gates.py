"""Issue 4 acceptance, gates: a real app (graphmind.Client) steered through the real hub's API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import graphmind
from graphmind_server.testing import HubProcess, in_thread, wait_for


@pytest.fixture
def client(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="e2e", url=hub.ingest_url)
    assert c.ready(5)
    yield c
    c.dispose()


def _run_of(hub: HubProcess, run_id: str, status: str) -> dict[str, Any]:
    return wait_for(
        lambda: (r := hub.api("GET", f"/api/runs/{run_id}")[1]) and r.get("status") == status and r,
        10,
        f"run {run_id} {status}",
    )


def test_a_before_breakpoint_holds_and_inject_skips_the_body(hub, client):
    status, state = hub.api(
        "PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:lookup", "gate": "before"}]}
    )
    assert status == 200 and "pending" not in state
    calls = []

    def lookup(city: str) -> str:
        calls.append(city)
        return "real"

    gated = client.wrap(lookup, name="lookup")
    run_ids = []

    def agent() -> str:
        with client.run("trip") as run:
            run_ids.append(run.run_id)
            return gated(city="Lisbon")

    t, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert (gate["nodeId"], gate["gate"], gate["reason"]) == ("tool:lookup", "before", "breakpoint")
    assert gate["runId"] == run_ids[0]
    assert (
        hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "inject", "value": "from the debugger"})[0]
        == 200
    )
    t.join(10)
    assert out == {"value": "from the debugger"}
    assert calls == []
    _run_of(hub, run_ids[0], "finished")
    events = hub.api("GET", f"/api/runs/{run_ids[0]}/events")[1]["events"]
    finished = [e for e in events if e["type"] == "node.finished" and e["nodeId"] == "tool:lookup"]
    assert finished and finished[0]["injected"] is True and finished[0]["output"] == "from the debugger"
    node = next(
        n for n in hub.api("GET", f"/api/runs/{run_ids[0]}")[1]["nodes"] if n["nodeId"] == "tool:lookup"
    )
    assert node["status"] == "injected"


def test_pause_on_error_is_on_by_default_and_retry_runs_the_body_again(hub, client):
    assert hub.api("GET", "/api/debug")[1]["pauseOnError"] == "on"
    attempts = []

    def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) == 1:
            raise ValueError("first try fails")
        return x * 2

    gated = client.wrap(flaky, name="flaky")
    run_ids = []

    def agent() -> int:
        with client.run("retrying") as run:
            run_ids.append(run.run_id)
            return gated(21)

    t, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert (gate["gate"], gate["reason"]) == ("error", "error")
    assert gate["error"]["name"] == "ValueError" and "first try fails" in gate["error"]["message"]
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "retry"})[0] == 200
    t.join(10)
    assert out == {"value": 42} and attempts == [21, 21]
    assert _run_of(hub, run_ids[0], "finished")["endedAt"] is not None


def test_abort_raises_run_aborted_in_the_app_and_the_run_is_aborted(hub, client):
    hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:lookup", "gate": "before"}]})
    calls = []
    gated = client.wrap(lambda: calls.append(1), name="lookup")
    run_ids = []

    def agent() -> None:
        with client.run("doomed") as run:
            run_ids.append(run.run_id)
            gated()

    t, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "abort"})[0] == 200
    t.join(10)
    assert isinstance(out.get("error"), graphmind.RunAborted)
    assert calls == []
    _run_of(hub, run_ids[0], "aborted")


def test_abort_through_the_run_route_releases_a_held_gate(hub, client):
    hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:lookup", "gate": "before"}]})
    gated = client.wrap(lambda: "real", name="lookup")
    run_ids = []

    def agent() -> None:
        with client.run("aborted-from-the-list") as run:
            run_ids.append(run.run_id)
            gated()

    t, out = in_thread(agent)
    hub.held_gates()[0]
    assert hub.api("POST", f"/api/runs/{run_ids[0]}/abort") == (200, {"ok": True})
    t.join(10)
    assert isinstance(out.get("error"), graphmind.RunAborted)
    _run_of(hub, run_ids[0], "aborted")
    assert hub.api("GET", "/api/gates")[1]["gates"] == []


def test_retry_at_a_loop_hold_runs_the_call_and_restarts_the_streak(hub, client):
    """Issue 16 item 5: the loop hold takes retry through the real hub; a breakpoint's before gate does not."""
    calls = []

    def lookup(city: str) -> str:
        calls.append(city)
        return "real"

    gated = client.wrap(lookup, name="lookup")
    run_ids = []

    def agent() -> list[str]:
        with client.run("looping") as run:
            run_ids.append(run.run_id)
            return [gated(city="Lisbon") for _ in range(4)]

    t, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert (gate["gate"], gate["reason"], gate["loop"]["repeats"]) == ("before", "loop", 3)
    assert gate["actions"] == ["continue", "retry", "inject", "abort"]
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "retry"})[0] == 200
    t.join(10)
    assert out == {"value": ["real"] * 4} and calls == ["Lisbon"] * 4  # the 4th call did not hold
    _run_of(hub, run_ids[0], "finished")
    events = hub.api("GET", f"/api/runs/{run_ids[0]}/events")[1]["events"]
    assert [e["action"] for e in events if e["type"] == "exec.resumed"] == ["retry"]

    # A before gate held for any other reason still refuses retry (422) and stays held.
    hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:lookup", "gate": "before"}]})
    t, out = in_thread(lambda: gated(city="Porto"))
    gate = hub.held_gates()[0]
    assert gate["reason"] == "breakpoint" and "retry" not in gate["actions"]
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "retry"})[0] == 422
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0] == 200
    t.join(10)
    assert out == {"value": "real"}
