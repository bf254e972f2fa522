from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from graphmind._events.pipeline import EventPipeline
from graphmind._events.redaction import RedactionSwitches
from graphmind.testing import ProxyLike, ThrowingGetterDict

ALL = RedactionSwitches(hide_inputs=True, hide_outputs=True, hide_tool_args=True, hide_tool_results=True)


def encode(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def node(event_type: str, kind: str = "tool", **fields: Any) -> dict[str, Any]:
    name = "search" if kind == "tool" else "step"
    return {
        "type": event_type,
        "seq": 1,
        "ts": 1.5,
        "runId": "r",
        "nodeId": f"{kind}:{name}",
        "instanceId": "i",
        "kind": kind,
        "name": name,
        **fields,
    }


class Recorder:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def __call__(self, message: str) -> None:
        self.messages.append(message)


# ---- acceptance: failure shapes -------------------------------------------------------------
@pytest.mark.parametrize(
    "make_bad",
    [lambda: ThrowingGetterDict(q="secret"), ProxyLike, lambda: {"nested": [ProxyLike()]}],
    ids=["dict-whose-getter-raises", "proxy-like", "nested-proxy"],
)
def test_an_unreadable_output_is_sent_with_the_failure_shape(make_bad: Any) -> None:
    bad = make_bad()  # built inside the test: pytest itself must not touch a Proxy-like value
    warn = Recorder()
    event = node("exec.paused", kind="llm", gateId="g1", gate="after", input={"prompt": "p"}, output=bad)
    out = EventPipeline(RedactionSwitches(hide_tool_results=True), warn).process(event)
    assert out is not None
    text = encode(out)
    assert '"input":"__REDACTED__","output":"__REDACTED__"' in text
    assert text.endswith(',"redaction":{"count":2,"keys":["input","output"],"failed":true}}')
    assert "hunter2" not in text and "secret" not in text
    assert warn.messages == []


@pytest.mark.parametrize(
    "make_deltas",
    [
        lambda: "oops",
        lambda: [1],
        lambda: [{"t": "text"}],
        lambda: [{"t": "text", "v": None}],
        lambda: [ProxyLike()],
        ProxyLike,
    ],
    ids=["string", "number-item", "no-v", "v-null", "proxy-item", "proxy-list"],
)
def test_a_malformed_delta_list_is_sent_empty_and_marked_failed(make_deltas: Any) -> None:
    deltas = make_deltas()
    out = EventPipeline(RedactionSwitches(hide_outputs=True), Recorder()).process(
        node("node.token", deltas=deltas)
    )
    assert out is not None
    assert out["deltas"] == []
    assert out["redaction"] == {"count": 1, "keys": ["deltas"], "failed": True}


def test_without_a_switch_an_unreadable_value_is_described_not_hidden() -> None:
    out = EventPipeline(RedactionSwitches(), Recorder()).process(node("node.finished", output=ProxyLike()))
    assert out is not None
    assert out["output"] == "[Unreadable: RuntimeError: proxy trap]"
    assert "redaction" not in out


def test_an_unreadable_identity_drops_the_event_with_one_warning() -> None:
    warn = Recorder()
    pipeline = EventPipeline(RedactionSwitches(), warn)
    assert pipeline.process(node("node.started", input=1) | {"nodeId": ProxyLike()}) is None
    assert pipeline.process(node("node.started", input=1) | {"runId": ProxyLike()}) is None
    assert pipeline.dropped == 2
    assert len(warn.messages) == 1
    assert warn.messages[0].startswith(
        "[graphmind] dropped a node.started event: its 'nodeId' field could not be read"
    )
    # The next event is fine again.
    assert pipeline.process(node("node.started", input=1)) is not None


def test_an_unreadable_key_drops_the_event() -> None:
    class BadKey:
        def __hash__(self) -> int:
            return 1

        def __str__(self) -> str:
            raise RuntimeError("no")

    warn = Recorder()
    event: dict[Any, Any] = {**node("node.started"), BadKey(): 1}
    assert EventPipeline(ALL, warn).process(event) is None
    assert len(warn.messages) == 1


def test_a_non_dict_event_is_read_as_a_mapping_or_dropped() -> None:
    class Event(Mapping[str, Any]):
        def __init__(self, data: dict[str, Any]) -> None:
            self.data = data

        def __getitem__(self, key: str) -> Any:
            return self.data[key]

        def __iter__(self) -> Iterator[str]:
            return iter(self.data)

        def __len__(self) -> int:
            return len(self.data)

    pipeline = EventPipeline(ALL, Recorder())
    out = pipeline.process(Event(node("node.started", input="x")))  # type: ignore[arg-type]
    assert out is not None and out["input"] == "__REDACTED__"
    assert pipeline.process(None) is None  # type: ignore[arg-type]
    assert pipeline.process(ProxyLike()) is None  # type: ignore[arg-type]


# ---- rules ---------------------------------------------------------------------------------
def test_node_error_is_never_redacted() -> None:
    error = {"name": "ValueError", "message": "bad input 'secret'", "stack": "..."}
    out = EventPipeline(ALL, Recorder()).process(node("node.error", error=error, durationMs=1.0, heldMs=0))
    assert out is not None
    assert out["error"] == error and "redaction" not in out


def test_the_event_is_a_snapshot() -> None:
    payload = {"rows": [1, 2]}
    out = EventPipeline(RedactionSwitches(), Recorder()).process(node("node.finished", output=payload))
    payload["rows"].append(3)
    assert out is not None and out["output"] == {"rows": [1, 2]}


def test_rich_payloads_are_made_json_safe_on_both_paths() -> None:
    payload = {1: b"\x00\xff", "nan": float("nan"), "set": {3, 1}}
    for switches in (RedactionSwitches(), RedactionSwitches(hide_tool_args=True)):
        out = EventPipeline(switches, Recorder()).process(node("node.finished", kind="llm", output=payload))
        assert out is not None
        assert out["output"] == {"1": {"$bytes": 2, "preview": "\x00\ufffd"}, "nan": "NaN", "set": [1, 3]}
        encode(out)


def test_oversized_payloads_are_shrunk_and_hidden_ones_are_not_measured() -> None:
    big = "x" * 600_000
    plain = EventPipeline(RedactionSwitches(), Recorder())
    out = plain.process(node("node.finished", output=big, attrs={"big": big}))
    assert out is not None
    assert out["output"]["$graphmind"] == "truncated" and out["output"]["bytes"] == 600_002
    assert out["attrs"]["$graphmind"] == "truncated"
    hidden = EventPipeline(RedactionSwitches(hide_outputs=True), Recorder()).process(
        node("node.finished", output=big)
    )
    assert hidden is not None and hidden["output"] == "__REDACTED__"


def test_an_oversized_delta_keeps_a_string_and_says_it_was_cut() -> None:
    for switches in (RedactionSwitches(), RedactionSwitches(hide_tool_args=True)):
        out = EventPipeline(switches, Recorder()).process(
            node("node.token", kind="llm", deltas=[{"t": "text", "v": "y" * 600_000}])
        )
        assert out is not None
        (delta,) = out["deltas"]
        assert delta == {"t": "text", "v": "y" * 65_536, "$graphmind": "truncated", "bytes": 600_002}


def test_delta_rules_by_switch() -> None:
    deltas = [
        {"t": "text", "v": "abc"},
        {"t": "reasoning", "v": "hm"},
        {"t": "tool-args", "v": "{}", "toolCallId": "c1", "toolName": "search"},
    ]

    def hidden(switches: RedactionSwitches, kind: str) -> list[bool]:
        out = EventPipeline(switches, Recorder()).process(node("node.token", kind=kind, deltas=deltas))
        assert out is not None
        return ["chars" in d for d in out["deltas"]]

    assert hidden(RedactionSwitches(hide_outputs=True), "llm") == [True, True, True]
    assert hidden(RedactionSwitches(hide_inputs=True), "llm") == [False, False, True]
    assert hidden(RedactionSwitches(hide_tool_args=True), "llm") == [False, False, True]
    assert hidden(RedactionSwitches(hide_tool_results=True), "llm") == [False, False, False]
    assert hidden(RedactionSwitches(hide_tool_results=True), "tool") == [True, True, True]


# ---- never raises ---------------------------------------------------------------------------
def _weird_values() -> list[Any]:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    return [
        None,
        1,
        2.5,
        float("inf"),
        "s",
        "\ud800",
        b"b",
        ProxyLike(),
        ThrowingGetterDict(a=1),
        cyclic,
        object(),
        {"t": "text", "v": ProxyLike()},
        [{"t": ProxyLike(), "v": "x"}],
        {ProxyLike: 1},
        {(1, 2): 3},
        set(),
        range(2),
        type,
        json,
        lambda: 1,
    ]


@pytest.mark.parametrize("switches", [RedactionSwitches(), ALL, RedactionSwitches(hide_tool_args=True)])
def test_the_pipeline_never_raises(switches: RedactionSwitches) -> None:
    rng = random.Random(7)
    weird = _weird_values()
    fields = [
        "type",
        "seq",
        "nodeId",
        "kind",
        "input",
        "output",
        "deltas",
        "error",
        "attrs",
        "meta",
        "usage",
        "value",
        "loop",
        "extra",
    ]
    pipeline = EventPipeline(switches, Recorder())
    for _ in range(2000):
        event = node("node.finished", kind=rng.choice(["tool", "llm"]))
        for field in rng.sample(fields, 3):
            event[field] = rng.choice(weird)
        out = pipeline.process(event)
        if out is not None:
            encode(out).encode("utf-8")


def test_parallel_processing_is_safe() -> None:
    pipeline = EventPipeline(RedactionSwitches(hide_outputs=True), Recorder())
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for i in range(500):
                out = pipeline.process(node("node.token", deltas=[{"t": "text", "v": str(i)}]))
                assert out is not None and out["redaction"]["count"] == 1
                assert pipeline.process(node("node.started", nodeId=ProxyLike())) is None
        except BaseException as exc:  # collected: a failure inside a thread must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors == []
    assert pipeline.dropped == 2000
