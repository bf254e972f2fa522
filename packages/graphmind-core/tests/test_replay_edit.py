""" "Edit input" at a replay divergence (issue 31's answers, decided by issue 30's one edit rule):
the held divergence says it takes an edited input; continue with one runs the call live with it
and records the edit; a refused edit holds the divergence again with the reason."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmind
from graphmind import protocol as proto
from graphmind.testing import FakeHub, write_cassette


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as h:
        yield h


def _tools(client: graphmind.Client, calls: list[str]) -> Any:
    def search(to: str) -> list[str]:
        calls.append(to)
        return [f"flight to {to}"]

    return client.wrap(search, "search")


@pytest.fixture
def recorded(hub: FakeHub, tmp_path: Path) -> Path:
    client = graphmind.Client(app="replay-edit", url=hub.url, retry_interval=0.2)
    assert client.ready(5)
    search = _tools(client, [])
    with client.run("trip"):
        search("CAI")
    sent = client.stats()["events"]
    hub.wait_for(lambda: len(hub.events) >= sent, what="every event at the hub")
    client.dispose()
    path = tmp_path / "trip.jsonl"
    write_cassette(path, client.client_id, list(hub.events))
    hub.events.clear()
    return path


def test_continue_with_an_edited_input_at_a_divergence_runs_the_call_live_with_it(
    hub: FakeHub, recorded: Path
) -> None:
    client = graphmind.Client(app="replay-edit", url=hub.url, retry_interval=0.2, replay=str(recorded))
    assert client.ready(5)
    calls: list[str] = []
    search = _tools(client, calls)
    out: list[Any] = []

    def agent() -> None:
        with client.run("trip"):
            out.append(search("LHR"))  # not what the recording has

    worker = threading.Thread(target=agent, daemon=True)
    try:
        worker.start()
        paused = hub.next_paused()
        assert paused["reason"] == proto.DIVERGENCE and paused["editable"] is True
        assert "notEditable" not in paused and paused["attempt"] == 1
        # Refused: an unknown parameter. The divergence is held again, with the reason.
        hub.resolve(paused["gateId"], "continue", input={"city": "OPO"})
        again = hub.next_paused(after=1)
        assert again["reason"] == proto.DIVERGENCE and "unknown parameter 'city'" in again["refused"]
        hub.resolve(again["gateId"], "continue", input={"to": "OPO"})
        worker.join(5)
        assert out == [["flight to OPO"]] and calls == ["OPO"]
        finished = hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "tool:search")
        assert finished["edited"] is True and finished["originalInput"] == {"to": "LHR"}
        assert finished["input"] == {"to": "OPO"} and "replayed" not in finished
    finally:
        client.dispose()
