"""Replay in core (docs/replay.md): a recording answers every matching call at its before gate."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmind
from graphmind import protocol as proto
from graphmind._replay.cassette import Cassette, write_cassette
from graphmind._replay.errors import CassetteError
from graphmind.testing import FakeHub


class Tools:
    """Three tools that count their calls; `search` fails when told to."""

    def __init__(self, client: graphmind.Client) -> None:
        self.calls: dict[str, int] = {"search": 0, "book": 0, "pay": 0}
        self.fail_search = False

        def search(query: str, opts: dict[str, Any] | None = None) -> list[str]:
            self.calls["search"] += 1
            if self.fail_search:
                raise LookupError("no flights (fake)")
            return [f"flight to {query}"]

        def book(flight: str) -> dict[str, Any]:
            self.calls["book"] += 1
            return {"booking": flight.upper(), "price": 100.0}

        def pay(amount: float) -> str:
            self.calls["pay"] += 1
            return f"paid {amount}"

        self.search = client.wrap(search, "search")
        self.book = client.wrap(book, "book")
        self.pay = client.wrap(pay, "pay")

    def agent(self, client: graphmind.Client, to: str = "CAI", stamp: int = 1) -> str:
        with client.run("trip"):
            flights = self.search(to, {"requestId": stamp, "cabin": "economy"})
            booking = self.book(flights[0])
            return self.pay(booking["price"])  # type: ignore[no-any-return]

    @property
    def total(self) -> int:
        return sum(self.calls.values())


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as h:
        yield h


@pytest.fixture
def recorded(hub: FakeHub, tmp_path: Path) -> Path:
    client = graphmind.Client(app="replay-test", url=hub.url, retry_interval=0.2)
    assert client.ready(5)
    tools = Tools(client)
    assert tools.agent(client) == "paid 100.0"
    return _save(hub, client, tmp_path / "trip.jsonl")


def _save(hub: FakeHub, client: graphmind.Client, path: Path) -> Path:
    """The client's events as the hub got them, written as a cassette (then the hub forgets them)."""
    sent = client.stats()["events"]
    hub.wait_for(lambda: len(hub.events) >= sent, what="every event at the hub")
    client.dispose()
    write_cassette(path, client.client_id, list(hub.events))
    hub.events.clear()
    return path


def _replaying(hub: FakeHub, replay: Any) -> graphmind.Client:
    client = graphmind.Client(app="replay-test", url=hub.url, retry_interval=0.2, replay=replay)
    assert client.ready(5)
    return client


def _ended(hub: FakeHub, node_id: str) -> dict[str, Any]:
    return hub.wait_event(
        lambda e: e.get("nodeId") == node_id and e["type"] in (proto.NODE_FINISHED, proto.NODE_ERROR)
    )


def test_a_matching_run_makes_no_call_and_every_node_is_replayed(hub: FakeHub, recorded: Path) -> None:
    client = _replaying(hub, {"source": str(recorded), "on_divergence": "fail"})  # fail: never a hang
    try:
        tools = Tools(client)
        assert tools.agent(client) == "paid 100.0"
        assert tools.total == 0
        for name in ("search", "book", "pay"):
            end = _ended(hub, f"tool:{name}")
            assert end["type"] == proto.NODE_FINISHED and end.get("replayed") is True
            assert "injected" not in end
        started = hub.of_type(proto.RUN_STARTED)[0]
        assert started["replayOf"] == Cassette.load(recorded).run_id and "forkedAt" not in started
    finally:
        client.dispose()
    assert (recorded.stat().st_mode & 0o777) == 0o600


def test_key_order_number_spelling_and_ignored_keys_at_any_depth_still_match(
    hub: FakeHub, recorded: Path
) -> None:
    client = _replaying(hub, {"source": recorded, "ignore_keys": ["requestId"], "on_divergence": "fail"})
    try:
        tools = Tools(client)
        with client.run("trip"):
            tools.search("CAI", {"cabin": "economy", "requestId": 99})  # another id, keys in another order
            tools.book("flight to CAI")
            tools.pay(100)  # 100 for 100.0
        assert tools.total == 0
    finally:
        client.dispose()


def test_fail_names_the_node_its_occurrence_and_the_diff(hub: FakeHub, recorded: Path) -> None:
    client = _replaying(hub, {"source": recorded, "on_divergence": "fail"})
    try:
        tools = Tools(client)
        with pytest.raises(graphmind.ReplayDivergence) as caught:
            tools.agent(client, to="LHR")
        error = caught.value
        assert (error.node_id, error.occurrence) == ("tool:search", 1)
        assert (
            "tool:search#1" in str(error)
            and '-  "query": "CAI"' in error.diff
            and '+  "query": "LHR"' in error.diff
        )
        assert tools.total == 0
        assert _ended(hub, "tool:search")["error"]["name"] == "ReplayDivergence"
    finally:
        client.dispose()


def test_detached_the_default_policy_is_fail(recorded: Path) -> None:
    client = graphmind.Client(app="replay-test", url="ws://127.0.0.1:9/ingest", replay=str(recorded))
    try:
        tools = Tools(client)
        with pytest.raises(graphmind.ReplayDivergence):
            tools.agent(client, to="LHR")
        assert tools.total == 0
    finally:
        client.dispose()


def test_live_runs_the_diverging_call_and_everything_after(hub: FakeHub, recorded: Path) -> None:
    # safe: off: book and pay are writes by the name rule, and this test is about running them live
    client = _replaying(hub, {"source": recorded, "on_divergence": "live", "safe": "off"})
    try:
        tools = Tools(client)
        with client.run("trip"):
            tools.search("CAI", {"requestId": 1, "cabin": "economy"})
            tools.book("another flight")  # diverges
            tools.pay(100.0)  # matches the recording, but runs: nothing after a live divergence replays
        assert tools.calls == {"search": 0, "book": 1, "pay": 1}
        assert _ended(hub, "tool:search").get("replayed") is True
        assert "replayed" not in _ended(hub, "tool:pay")
    finally:
        client.dispose()


def test_hold_shows_expected_and_actual_and_recorded_uses_the_recording(hub: FakeHub, recorded: Path) -> None:
    client = _replaying(hub, {"source": recorded})  # attached: hold is the default
    hub.auto_answer(proto.RECORDED)
    try:
        tools = Tools(client)
        with client.run("trip"):
            flights = tools.search("CAI", {"requestId": 2, "cabin": "economy"})  # requestId differs
            assert flights == ["flight to CAI"]
            tools.book(flights[0])
        paused = hub.of_type(proto.EXEC_PAUSED)
        assert len(paused) == 1
        held = paused[0]
        assert held["reason"] == "divergence" and held["gate"] == "before"
        assert held["actions"] == ["continue", "recorded", "inject", "abort"]
        assert held["expected"]["opts"]["requestId"] == 1 and held["input"]["opts"]["requestId"] == 2
        assert held["replay"] == {
            "source": str(recorded),
            "occurrence": 1,
            "why": "its input differs from the recording",
        }
        assert tools.total == 0 and _ended(hub, "tool:book").get("replayed") is True
    finally:
        client.dispose()


def test_continue_at_a_held_divergence_goes_live(hub: FakeHub, recorded: Path) -> None:
    client = _replaying(hub, {"source": recorded, "on_divergence": "hold"})
    hub.auto_answer(proto.CONTINUE)
    try:
        tools = Tools(client)
        tools.agent(client, to="LHR")
        assert tools.calls == {"search": 1, "book": 1, "pay": 1}
    finally:
        client.dispose()


def test_a_recorded_error_replays_as_an_error(hub: FakeHub, tmp_path: Path) -> None:
    client = graphmind.Client(app="replay-test", url=hub.url, retry_interval=0.2)
    tools = Tools(client)
    tools.fail_search = True
    assert client.ready(5)
    with pytest.raises(LookupError):
        tools.search("CAI")
    path = _save(hub, client, tmp_path / "error.jsonl")
    client = _replaying(hub, {"source": path, "on_divergence": "fail"})
    try:
        tools = Tools(client)
        with pytest.raises(graphmind.ReplayedError) as caught:
            tools.search("CAI")
        assert caught.value.type_name == "LookupError" and caught.value.message == "no flights (fake)"
        end = _ended(hub, "tool:search")
        assert end["type"] == proto.NODE_ERROR and end["replayed"] is True
        assert end["error"]["name"] == "LookupError"
        assert tools.total == 0
    finally:
        client.dispose()


def test_a_fork_gives_the_node_a_new_output_and_the_rest_runs_live(hub: FakeHub, recorded: Path) -> None:
    client = _replaying(
        hub,
        {
            "source": recorded,
            "fork": "tool:book#1",
            "output": {"booking": "X", "price": 7},
            "on_divergence": "fail",
            "safe": "off",  # pay (a write by the name rule) runs live here
        },
    )
    try:
        tools = Tools(client)
        assert tools.agent(client) == "paid 7"
        assert tools.calls == {"search": 0, "book": 0, "pay": 1}
        assert _ended(hub, "tool:book").get("injected") is True
        assert hub.of_type(proto.RUN_STARTED)[0]["forkedAt"] == "tool:book#1"
    finally:
        client.dispose()


def test_a_fork_with_an_edited_input_runs_that_call_live_with_it(hub: FakeHub, recorded: Path) -> None:
    # Through edit's one decision (issue 30): the tool receives the edited arguments, its node
    # records edited/originalInput, and everything after it runs live.
    client = _replaying(
        hub,
        {
            "source": recorded,
            "fork": "tool:book#1",
            "input": {"flight": "flight to OPO"},
            "on_divergence": "fail",
            "safe": "off",  # pay (a write by the name rule) runs live here
        },
    )
    try:
        tools = Tools(client)
        assert tools.agent(client) == "paid 100.0"
        assert tools.calls == {"search": 0, "book": 1, "pay": 1}
        end = _ended(hub, "tool:book")
        assert end["output"] == {"booking": "FLIGHT TO OPO", "price": 100.0}
        assert end["edited"] is True and end["originalInput"] == {"flight": "flight to CAI"}
        assert hub.of_type(proto.RUN_STARTED)[0]["forkedAt"] == "tool:book#1"
    finally:
        client.dispose()


def test_a_fork_input_the_call_cannot_take_fails_that_node_in_one_line(hub: FakeHub, recorded: Path) -> None:
    client = _replaying(hub, {"source": recorded, "fork": "tool:book#1", "input": {"seat": "12A"}})
    try:
        tools = Tools(client)
        with pytest.raises(CassetteError) as caught:
            tools.agent(client)
        message = str(caught.value)
        assert "\n" not in message and message.startswith(
            "graphmind: the fork's input for tool:book#1 cannot be used"
        )
        assert tools.calls == {"search": 0, "book": 0, "pay": 0}
    finally:
        client.dispose()


def test_until_replays_up_to_the_node_and_runs_live_from_it(hub: FakeHub, recorded: Path) -> None:
    seq = Cassette.load(recorded).find("tool:book#1").seq
    client = _replaying(hub, {"source": recorded, "until": str(seq), "on_divergence": "fail", "safe": "off"})
    try:
        tools = Tools(client)
        tools.agent(client)
        assert tools.calls == {"search": 0, "book": 1, "pay": 1}
    finally:
        client.dispose()


def test_a_call_the_recording_does_not_have_diverges(hub: FakeHub, recorded: Path) -> None:
    client = _replaying(hub, {"source": recorded, "on_divergence": "fail"})
    try:
        tools = Tools(client)
        tools.agent(client)
        with pytest.raises(graphmind.ReplayDivergence, match="the recording has no call #2 of tool:pay"):
            tools.pay(1.0)
    finally:
        client.dispose()


def test_a_hidden_output_cannot_be_replayed(hub: FakeHub, tmp_path: Path) -> None:
    client = graphmind.Client(app="replay-test", url=hub.url, retry_interval=0.2, hide_outputs=True)
    assert client.ready(5)
    Tools(client).pay(3.0)
    path = _save(hub, client, tmp_path / "hidden.jsonl")
    client = graphmind.Client(app="replay-test", url="ws://127.0.0.1:9/ingest", replay=str(path))
    try:
        with pytest.raises(graphmind.ReplayDivergence, match="__REDACTED__"):
            Tools(client).pay(3.0)
    finally:
        client.dispose()


def test_the_environment_sets_the_replay(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMIND_REPLAY", str(recorded))
    monkeypatch.setenv("GRAPHMIND_REPLAY_FORK", "tool:pay#1")
    monkeypatch.setenv("GRAPHMIND_REPLAY_FORK_OUTPUT", json.dumps("forked"))
    client = graphmind.Client(app="replay-test", url="ws://127.0.0.1:9/ingest")
    try:
        tools = Tools(client)
        assert tools.agent(client) == "forked" and tools.total == 0
    finally:
        client.dispose()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("/nonexistent/c.jsonl", "cannot read the replay cassette /nonexistent/c.jsonl"),
        ({"source": "x", "on_divergence": "skip"}, "on_divergence must be one of hold, live, fail"),
        ({"source": "x", "output": 1}, "needs the node to fork at"),
        ({"source": "x", "colour": 1}, "replay= takes source"),
    ],
)
def test_a_replay_that_cannot_be_set_up_is_one_clear_error(option: Any, message: str) -> None:
    with pytest.raises(CassetteError, match=message):
        graphmind.Client(app="replay-test", url="ws://127.0.0.1:9/ingest", replay=option)


def test_an_unknown_selector_names_what_was_recorded(recorded: Path) -> None:
    with pytest.raises(CassetteError, match=r"no recorded node 'tool:nope#1'.*tool:search#1"):
        graphmind.Client(
            url="ws://127.0.0.1:9/ingest", replay={"source": recorded, "fork": "tool:nope#1", "output": 1}
        )


def test_a_bare_node_id_is_told_the_selector_to_write(recorded: Path) -> None:
    # `tool:pay` was recorded once: the error names `tool:pay#1`, which the first five may not
    with pytest.raises(
        CassetteError, match=r"no recorded node 'tool:pay' \(tool:pay ran once: write tool:pay#1\)"
    ):
        graphmind.Client(
            url="ws://127.0.0.1:9/ingest", replay={"source": recorded, "fork": "tool:pay", "output": 1}
        )
    with pytest.raises(CassetteError, match=r"'tool:pay#2' \(tool:pay ran once: write tool:pay#1\)"):
        graphmind.Client(
            url="ws://127.0.0.1:9/ingest", replay={"source": recorded, "fork": "tool:pay#2", "output": 1}
        )


def test_a_file_that_is_not_an_export_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": 1}\n')
    with pytest.raises(CassetteError, match="not a GraphMind export"):
        Cassette.load(path)


def test_hide_inputs_keeps_the_command_line_out_of_run_meta(hub: FakeHub) -> None:
    client = graphmind.Client(app="replay-test", url=hub.url, hide_inputs=True)
    try:
        assert client.ready(5)
        with client.run("r"):
            pass
        meta = hub.wait_event(lambda e: e["type"] == proto.RUN_STARTED)["meta"]
        assert "argv" not in meta and "cwd" not in meta and "executable" not in meta
    finally:
        client.dispose()
