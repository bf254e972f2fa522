"""Issue 16 item 1 end to end: a streaming tool (a generator function under `client.tool`) against the
real hub: its chunks stored as `node.token`, its ending as `streaming: true` + `chunks`, an after
breakpoint answered through the hub's API with an injected list of chunks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import graphmind
from graphmind_server.testing import HubProcess, in_thread, wait_for


@pytest.fixture
def client(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="e2e-stream", url=hub.ingest_url)
    assert c.ready(5)
    yield c
    c.dispose()


def _events(hub: HubProcess, run_id: str) -> list[dict[str, Any]]:
    def finished() -> list[dict[str, Any]] | None:
        run = hub.api("GET", f"/api/runs/{run_id}")[1]
        if run.get("status") != "finished":
            return None
        return list(hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"])

    return list(wait_for(finished, 10, f"run {run_id} finished"))


def test_a_streaming_tool_through_the_real_hub(hub: HubProcess, client: graphmind.Client) -> None:
    status, _ = hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:flights", "gate": "after"}]})
    assert status == 200
    produced: list[str] = []

    @client.tool
    def progress(query: str) -> Iterator[Any]:
        yield "searching "
        yield {"found": 2}

    @client.tool
    def flights(city: str) -> Iterator[str]:
        for flight in ("TP1", "TP2"):
            produced.append(flight)
            yield flight

    run_ids: list[str] = []

    def agent() -> tuple[list[Any], list[str]]:
        with client.run("trip") as run:
            run_ids.append(run.run_id)
            return list(progress("Lisbon")), list(flights("Lisbon"))

    thread, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert (gate["nodeId"], gate["gate"]) == ("tool:flights", "after")
    assert produced == ["TP1", "TP2"] and "value" not in out  # exhausted, the caller still waits
    status, _ = hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "inject", "value": ["TP9", "TP8"]})
    assert status == 200
    thread.join(10)
    assert out == {"value": (["searching ", {"found": 2}], ["TP9", "TP8"])}

    events = _events(hub, run_ids[0])
    tokens = "".join(
        d["v"]
        for e in events
        if e["type"] == "node.token" and e["nodeId"] == "tool:progress"
        for d in e["deltas"]
    )
    assert tokens == 'searching {"found":2}\n'
    endings = {
        e["nodeId"]: e for e in events if e["type"] == "node.finished" and e["nodeId"].startswith("tool:")
    }
    assert endings["tool:progress"]["output"] == ["searching ", {"found": 2}]
    assert (endings["tool:progress"]["streaming"], endings["tool:progress"]["chunks"]) == (True, 2)
    assert endings["tool:flights"]["injected"] is True and endings["tool:flights"]["output"] == ["TP9", "TP8"]
    assert (endings["tool:flights"]["streaming"], endings["tool:flights"]["chunks"]) == (True, 2)
