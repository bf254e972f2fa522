"""Replay what you choose (docs/testing.md): `only="llm"` answers model calls and runs tools live,
`only="tool"` the reverse; and `answer_of`, the final answer `graphmind test new` asserts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmind
from graphmind._api.wrappers import gate_callable
from graphmind.replay import Cassette, CassetteError, answer_of
from graphmind.testing import FakeHub, write_cassette


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as h:
        yield h


def _agent(client: graphmind.Client, calls: list[str], fee: int) -> Any:
    """A model step (a hand-made `llm` span the recording answers) and a tool whose body may change."""

    def lookup(order: str) -> dict[str, Any]:
        calls.append("lookup")
        return {"order": order, "fee": fee}

    def model(prompt: str) -> dict[str, Any]:
        calls.append("model")
        return {"role": "assistant", "content": f"refund {prompt}"}

    tool = client.wrap(lookup, "lookup")
    step = gate_callable(client._engine, model, "step", kind="llm")  # a model step, as adapters make one
    with client.run("refund"):
        reply = step("A1")
        return reply["content"], tool("A1")


def _record(hub: FakeHub, tmp_path: Path) -> Path:
    client = graphmind.Client(app="only", url=hub.url)
    assert client.ready(5)
    _agent(client, [], fee=1)
    sent = client.stats()["events"]
    hub.wait_for(lambda: len(hub.events) >= sent, what="every event at the hub")
    client.dispose()
    path = tmp_path / "refund.jsonl"
    write_cassette(path, client.client_id, list(hub.events))
    hub.events.clear()
    return path


def _replay(cassette: Path, only: str, calls: list[str]) -> Any:
    client = graphmind.Client(app="only", replay={"source": cassette, "only": only})
    try:
        return _agent(client, calls, fee=2)
    finally:
        client.dispose()


def test_only_llm_runs_the_changed_tool_and_replays_the_model(hub: FakeHub, tmp_path: Path) -> None:
    cassette = _record(hub, tmp_path)
    calls: list[str] = []
    assert _replay(cassette, "llm", calls) == ("refund A1", {"order": "A1", "fee": 2})
    assert calls == ["lookup"], "the tool body runs, the model step replays"


def test_only_tool_replays_the_tool_and_runs_the_model(hub: FakeHub, tmp_path: Path) -> None:
    cassette = _record(hub, tmp_path)
    calls: list[str] = []
    assert _replay(cassette, "tool", calls) == ("refund A1", {"order": "A1", "fee": 1})
    assert calls == ["model"], "the tool's recorded output comes back; the model runs"


def test_a_bad_only_is_one_line(hub: FakeHub, tmp_path: Path) -> None:
    cassette = _record(hub, tmp_path)
    with pytest.raises(CassetteError, match="must be one of llm, tool"):
        graphmind.Client(app="only", replay={"source": cassette, "only": "chain"})


def test_answer_of_is_the_last_model_reply_or_a_chosen_node(hub: FakeHub, tmp_path: Path) -> None:
    cassette = _record(hub, tmp_path)
    recording = Cassette.load(cassette)
    found = answer_of(recording)
    assert found is not None and (found.selector, found.value) == ("llm:step#1", "refund A1")
    tool = answer_of(recording, "tool:lookup#1")
    assert tool is not None and tool.value == {"order": "A1", "fee": 1}
    with pytest.raises(CassetteError, match="no recorded node 'tool:nope#1'"):
        answer_of(recording, "tool:nope#1")
