"""Pause is armed in the hub, not only in the apps attached when it was pressed: an app that attaches
later holds its first gate, a second press takes it back, and it holds one gate, not one per app."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

import graphmind
from graphmind_server.testing import HubProcess, wait_for

NOTHING_ARMED = {"any": False, "runs": []}


@pytest.fixture
def clients() -> Iterator[list[graphmind.Client]]:
    made: list[graphmind.Client] = []
    yield made
    for c in made:
        c.dispose()


def attach(hub: HubProcess, made: list[graphmind.Client], app: str) -> graphmind.Client:
    c = graphmind.Client(app=app, url=hub.ingest_url, retry_interval=0.2)
    made.append(c)
    assert c.ready(5)
    return c


def armed(hub: HubProcess) -> dict[str, Any]:
    status, body = hub.api("GET", "/api/pause")
    assert status == 200, body
    return dict(body["pause"])


def call_in_thread(gated: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(gated()), daemon=True)
    t.start()
    return t, out


def test_a_pause_armed_before_any_app_attached_holds_the_first_gate_of_the_app_that_attaches(
    hub: HubProcess, clients: list[graphmind.Client]
) -> None:
    assert hub.api("PUT", "/api/debug", {"pauseOnError": "off"})[0] == 200
    assert hub.api("POST", "/api/pause", {}) == (200, {"ok": True, "pause": {"any": True, "runs": []}})
    client = attach(hub, clients, "late")
    # The hub sends the armed pause right after the welcome; the reader thread applies it.
    wait_for(lambda: client._hub.pause_pending, 5, "the late app to get the armed pause")
    t, out = call_in_thread(client.wrap(lambda: "ran", name="first"))
    gate = hub.held_gates()[0]
    assert (gate["reason"], gate["nodeId"]) == ("pause", "tool:first")
    assert armed(hub) == NOTHING_ARMED  # taken by that gate
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0] == 200
    t.join(10)
    assert out == ["ran"]


def test_a_second_press_takes_the_pause_back_and_the_next_call_runs_through(
    hub: HubProcess, clients: list[graphmind.Client]
) -> None:
    client = attach(hub, clients, "disarmed")
    assert hub.api("POST", "/api/pause", {})[0] == 200
    wait_for(lambda: client._hub.pause_pending, 5, "the app to get the pause")
    assert hub.api("DELETE", "/api/pause", {}) == (200, {"ok": True, "pause": NOTHING_ARMED})
    wait_for(lambda: not client._hub.pause_pending, 5, "the app to drop the pause")
    assert client.wrap(lambda: "ran", name="through")() == "ran"
    assert hub.api("GET", "/api/gates")[1]["gates"] == []
    # Taken back before any app attached: a late app gets nothing.
    assert hub.api("POST", "/api/pause", {})[0] == 200
    assert hub.api("DELETE", "/api/pause", {})[0] == 200
    late = attach(hub, clients, "late")
    assert late.wrap(lambda: "ran", name="through")() == "ran"
    assert hub.api("GET", "/api/gates")[1]["gates"] == []


def test_a_pause_holds_the_next_gate_in_one_app_and_the_others_drop_theirs(
    hub: HubProcess, clients: list[graphmind.Client]
) -> None:
    first, second = attach(hub, clients, "one"), attach(hub, clients, "two")
    assert hub.api("POST", "/api/pause", {})[0] == 200
    wait_for(lambda: first._hub.pause_pending and second._hub.pause_pending, 5, "both apps to get the pause")
    t, out = call_in_thread(first.wrap(lambda: "held", name="one"))
    gate = hub.held_gates()[0]
    wait_for(lambda: not second._hub.pause_pending, 5, "the other app to drop its pause")
    assert second.wrap(lambda: "ran", name="two")() == "ran"
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0] == 200
    t.join(10)
    assert out == ["held"]


def test_a_run_pause_no_gate_took_is_gone_when_the_run_ends(
    hub: HubProcess, clients: list[graphmind.Client]
) -> None:
    client = attach(hub, clients, "ends")
    with client.run("short") as run:
        assert hub.api("POST", "/api/pause", {"runId": run.run_id})[1]["pause"]["runs"] == [run.run_id]
    wait_for(lambda: armed(hub) == NOTHING_ARMED, 5, "the ended run's pause to be dropped")


def test_the_pause_body_is_checked(hub: HubProcess) -> None:
    for method in ("POST", "DELETE"):
        status, body = hub.api(method, "/api/pause", {"runId": 3})
        assert status == 400 and "runId" in body["error"]
    assert armed(hub) == NOTHING_ARMED
