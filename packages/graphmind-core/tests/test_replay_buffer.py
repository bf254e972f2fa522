"""The replay ring: events wait there as the pipeline made them, are encoded only when first sent,
and stay within `buffer_size` events and about `max_buffer_bytes` of JSON."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

import graphmind
from graphmind import protocol
from graphmind._events.pipeline import EventPipeline
from graphmind._events.redaction import RedactionSwitches
from graphmind.testing import FakeHub


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def search(q: str, blob: str) -> int:
    return len(blob)


def test_a_detached_app_never_encodes_an_event(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[Any] = []
    real = protocol.encode
    monkeypatch.setattr(protocol, "encode", lambda frame: encoded.append(frame) or real(frame))
    client = graphmind.Client(app="t", url=f"ws://127.0.0.1:{free_port()}/ingest", retry_interval=3600)
    tool = client.wrap(search)
    with client.run("r"):
        for i in range(50):
            tool(f"q{i}", "x" * 100)
    assert client.stats()["buffered"] >= 102
    assert [f for f in encoded if f.get("type") in protocol.EVENT_TYPES] == []
    client.dispose()


def test_buffered_events_replay_once_a_hub_comes_up_and_the_byte_budget_keeps_the_newest() -> None:
    port = free_port()
    client = graphmind.Client(
        app="t", url=f"ws://127.0.0.1:{port}/ingest", retry_interval=3600, max_buffer_bytes=40_000
    )
    tool = client.wrap(search)
    with client.run("r"):
        for i in range(200):  # 400 node events of about 1 KB each: ten times the budget
            tool(f"q{i}", "x" * 1000)
    stats = client.stats()
    assert stats["dropped"] > 300, stats
    with FakeHub().start(port) as hub:
        assert client.ready(5)
        hub.wait_for(lambda: any(e.get("type") == "run.finished" for e in hub.events), what="the replay")
        events = list(hub.events)
        client.dispose()
    sizes = [len(protocol.encode(e)) for e in events]
    assert 30_000 <= sum(sizes) <= 48_000, sum(sizes)  # the budget, give or take the size estimate
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and seqs[-1] == max(seqs)
    started = [e for e in events if e["type"] == "node.started"]
    assert started[-1]["input"] == {"q": "q199", "blob": "x" * 1000}
    assert len(started) < 40


def test_events_are_encoded_once_and_a_replay_sends_the_same_text(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = protocol.encode

    def counting(frame: dict[str, Any]) -> str:
        if frame.get("type") in protocol.EVENT_TYPES:  # not the hub's frames (FakeHub encodes too)
            calls.append(frame["type"])
        return real(frame)

    monkeypatch.setattr(protocol, "encode", counting)
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url, retry_interval=0.1)
        assert client.ready(5)
        tool = client.wrap(search)
        with client.run("r"):
            tool("a", "b")
        hub.wait_for(lambda: len(hub.of_type("run.finished")) == 1, what="the run")
        first = list(calls)
        hub.drop_connections()  # the client reconnects and replays its whole ring
        hub.wait_for(lambda: len(hub.of_type("run.finished")) == 2, what="the replay")
        client.dispose()
    assert sorted(first) == sorted(["run.started", "node.started", "node.finished", "run.finished"])
    assert calls == first  # the replay re-sent the kept text
    once, again = hub.of_type("node.finished")
    assert once == again


SAMPLES: list[dict[str, Any]] = [
    {
        "type": "node.started",
        "runId": "r1",
        "nodeId": "tool:search",
        "instanceId": "i-1",
        "kind": "tool",
        "name": "search",
        "seq": 3,
        "ts": 1.5,
        "input": {"q": "lisbon", "limit": 10, "tags": ["a", "b"] * 20},
    },
    {
        "type": "node.finished",
        "runId": "r1",
        "nodeId": "llm:step",
        "instanceId": "i-2",
        "kind": "llm",
        "name": "step",
        "seq": 4,
        "ts": 2.5,
        "durationMs": 1.25,
        "heldMs": 0,
        "output": "word " * 2000,
        "usage": {"inputTokens": 3, "outputTokens": 4},
    },
    {
        "type": "node.token",
        "runId": "r1",
        "nodeId": "llm:step",
        "instanceId": "i-2",
        "kind": "llm",
        "seq": 5,
        "ts": 3.5,
        "deltas": [{"t": "text", "v": "hello "}] * 50,
    },
    {
        "type": "run.started",
        "runId": "r1",
        "name": "plan",
        "app": "a",
        "seq": 1,
        "ts": 0.5,
        "meta": {"user": "ana"},
    },
]


@pytest.mark.parametrize("switches", [RedactionSwitches(), RedactionSwitches(hide_tool_args=True)])
@pytest.mark.parametrize("trusted", [False, True])
@pytest.mark.parametrize("sample", SAMPLES, ids=[s["type"] for s in SAMPLES])
def test_the_size_hint_is_close_to_the_encoded_size(
    sample: dict[str, Any], trusted: bool, switches: RedactionSwitches
) -> None:
    sized = EventPipeline(switches, lambda _m: None).process_sized(json.loads(json.dumps(sample)), trusted)
    assert sized is not None
    out, hint = sized
    actual = len(protocol.encode(out))
    assert 0.5 * actual <= hint <= 2 * actual + 400, (hint, actual)


def test_the_fast_path_cuts_a_long_text_output_as_the_full_pass_does() -> None:
    pipeline = EventPipeline(RedactionSwitches(), lambda _m: None)
    event = {
        "type": "node.finished",
        "runId": "r",
        "nodeId": "llm:step",
        "instanceId": "i",
        "kind": "llm",
        "name": "step",
        "seq": 1,
        "ts": 1.0,
        "output": "y" * 600_000,
    }
    fast = pipeline.process(dict(event), True)
    full = pipeline.process(dict(event), False)
    assert fast == full
    assert fast is not None and fast["output"]["$graphmind"] == "truncated"
