"""Owned payloads (docs/adapters.md, "Owned payloads"): an adapter that built a node's input / output
fresh, of plain JSON leaves, hands it over without the pipeline's snapshot copy. Nothing else may
tell: the same event, the same size, the same redaction, masking and shrinking."""

from __future__ import annotations

import copy
import enum
import math
from typing import Any

import pytest

import graphmind
from graphmind import protocol
from graphmind._events.mask import MASKED
from graphmind._events.payload import MAX_PAYLOAD_BYTES, TRUNCATED
from graphmind._events.pipeline import EventPipeline
from graphmind._events.redaction import PLACEHOLDER, RedactionSwitches
from graphmind.adapter import NodeSpec, Owned, Settled, engine_for, json_scalar, json_scalars, plain_message
from graphmind.testing import FakeHub

OFF = RedactionSwitches(False, False, False, False)


class Colour(enum.Enum):
    RED = "red"


class Role(str, enum.Enum):
    USER = "user"


class Level(enum.IntEnum):
    ONE = 1


class Text(str):
    pass


@pytest.mark.parametrize(
    "value",
    ["plain", "", "héllo ✓", "\U0001f600", 0, -(10**30), True, False, None, 1.5, -0.0, 1e308],
)
def test_json_scalar_accepts_what_the_snapshot_keeps_as_it_is(value: Any) -> None:
    assert json_scalar(value)
    assert json_scalars([value, "x", 1, None])


@pytest.mark.parametrize(
    "value",
    [
        "lone \ud800 surrogate",
        "\udfff",
        "\ud83d\ude00",  # a surrogate pair in a str: the snapshot joins it into one character
        math.nan,
        math.inf,
        -math.inf,
        Role.USER,  # a StrEnum: the snapshot writes its value, as a plain str
        Level.ONE,
        Colour.RED,
        Text("a str subclass"),
        (1, 2),
        [1],
        {"k": "v"},
        b"bytes",
        object(),
    ],
)
def test_json_scalar_refuses_anything_the_snapshot_would_change_or_copy(value: Any) -> None:
    assert not json_scalar(value)
    assert not json_scalars(["x", value])


def _reference(event: dict[str, Any]) -> tuple[str, int]:
    sized = EventPipeline(OFF, lambda _m: None).process_sized(copy.deepcopy(event), trusted=True)
    assert sized is not None
    return protocol.encode(sized[0]), sized[1]  # type: ignore[arg-type]


def _event(**payload: Any) -> dict[str, Any]:
    event = {"type": "node.started", "runId": "r", "nodeId": "llm:step", "instanceId": "i", "kind": "llm"}
    event.update(name="step", seq=1, ts=1.0, **payload)
    return event


PLAIN_INPUT = {
    "model": "gpt",
    "messages": [{"role": "user", "content": "héllo"}, {"role": "assistant", "content": None}],
    "tools": ["search"],
}


@pytest.mark.parametrize(
    "payload",
    [
        {"input": PLAIN_INPUT, "attrs": {"model": "gpt", "stream": False, "tools": ["search"]}},
        {"output": {"role": "assistant", "content": "done", "n": 1.5}, "usage": {"inputTokens": 3}},
        {"input": {"big": "x" * (MAX_PAYLOAD_BYTES + 10)}},  # oversized: shrunk exactly as before
        {"input": "a top-level string", "output": 7},
        {"input": [], "output": {}},
    ],
)
def test_an_owned_event_is_the_event_the_full_pass_makes(payload: dict[str, Any]) -> None:
    event = _event(**copy.deepcopy(payload))
    expected = _reference(event)
    pipeline = EventPipeline(OFF, lambda _m: None)
    sized = pipeline.process_sized(event, True, True)
    assert sized is not None
    assert (protocol.encode(sized[0]), sized[1]) == expected  # type: ignore[arg-type]
    if "input" in payload and "big" in str(payload["input"])[:10]:
        assert sized[0]["input"]["$graphmind"] == TRUNCATED


def test_an_owned_value_is_recorded_as_it_is_and_an_unowned_one_is_copied() -> None:
    """The lever itself: with `owned`, the buffered event holds the adapter's own dict."""
    value = {"messages": [{"role": "user", "content": "hi"}]}
    pipeline = EventPipeline(OFF, lambda _m: None)
    owned = pipeline.process(_event(input=value), True, True)
    copied = pipeline.process(_event(input=value), True, False)
    assert owned is not None and copied is not None
    assert owned["input"] is value
    assert copied["input"] == value and copied["input"] is not value
    # not trusted (an identity string the engine did not check): the full pass, whatever `owned` says
    untrusted = pipeline.process(_event(input=value), False, True)
    assert untrusted is not None and untrusted["input"] is not value


def test_a_hide_switch_still_hides_an_owned_input() -> None:
    pipeline = EventPipeline(RedactionSwitches(hide_inputs=True), lambda _m: None)
    out = pipeline.process(_event(input={"secret": "s"}, attrs={"a": 1}), True, True)
    assert out is not None
    assert out["input"] == PLACEHOLDER
    assert out["redaction"] == {"count": 1, "keys": ["input"]}


def test_a_mask_still_masks_an_owned_input_and_leaves_the_adapters_value_alone() -> None:
    import re

    value = {"messages": [{"role": "user", "content": "key sk-123"}]}
    pipeline = EventPipeline(OFF, lambda _m: None, re.compile(r"sk-\d+"))
    out = pipeline.process(_event(input=value), True, True)
    assert out is not None
    assert out["input"]["messages"][0]["content"] == f"key {MASKED}"
    assert value["messages"][0]["content"] == "key sk-123"


class Seen(EventPipeline):
    """What the engine hands the pipeline: (event type, owned)."""

    def __init__(self) -> None:
        super().__init__(OFF, lambda _m: None)
        self.flags: list[tuple[str, bool]] = []

    def process_sized(
        self,
        event: dict[str, Any],
        trusted: bool = False,
        owned: bool = False,
        payload: tuple[str, ...] | None = None,
        measured: int = 0,
    ) -> tuple[dict[str, Any], int] | None:
        self.flags.append((event["type"], owned))
        return super().process_sized(event, trusted, owned, payload, measured)


def _client() -> tuple[graphmind.Client, Seen]:
    client = graphmind.Client(app="t", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    seen = Seen()
    client._pipeline = seen
    return client, seen


@pytest.mark.parametrize("owned", [True, False])
def test_the_engine_passes_the_claim_of_the_spec_and_of_settled(owned: bool) -> None:
    client, seen = _client()
    engine = engine_for(client)
    spec = NodeSpec("step", "llm", input={"q": "x"}, attrs={"model": "m"}, owned=owned)
    result = engine.execute(
        spec, lambda: 41, settle=lambda r: Settled(r + 1, {"a": r}, {"n": 1}, owned=owned)
    )
    client.dispose()
    assert result == 42
    assert [f for f in seen.flags if f[0].startswith("node.")] == [
        ("node.started", owned),
        ("node.finished", owned),
    ]


@pytest.mark.parametrize("owned", [True, False])
def test_a_stream_loop_passes_the_claim_of_an_owned_description(owned: bool) -> None:
    client, seen = _client()
    engine = engine_for(client)

    def describe(items: list[Any]) -> tuple[Any, dict[str, Any] | None]:
        described = ({"text": "".join(items)}, {"outputTokens": len(items)})
        return Owned(described) if owned else described

    ex = engine.start_node(NodeSpec("step", "llm", input={"q": "x"}))
    assert list(ex.stream_sync(lambda: iter(["a", "b"]), describe=describe)) == ["a", "b"]
    cut = engine.start_node(NodeSpec("step", "llm", input={"q": "y"}))
    stream = cut.stream_sync(lambda: iter(["a", "b"]), describe=describe)
    assert next(stream) == "a"
    stream.close()  # closed early: the cut-short ending takes the claim too
    client.dispose()
    assert [f for f in seen.flags if f[0] == "node.finished"] == [("node.finished", owned)] * 2


def test_hold_if_the_gates_and_the_hub_see_the_plain_values(hub: FakeHub, client: graphmind.Client) -> None:
    """No wrapper reaches user code or the wire: a hold_if condition gets the input's own values,
    the held gates and the stored events carry them as JSON."""
    got: list[Any] = []
    paused: list[dict[str, Any]] = []

    def answer(frame: dict[str, Any]) -> tuple[str, Any]:
        paused.append(frame)
        return ("continue", None)

    def condition(**kwargs: Any) -> str:
        got.append(kwargs)
        return "asked"

    hub.auto_answer(answer)
    engine = engine_for(client)
    spec = NodeSpec(
        "step", "llm", input={"q": "x"}, owned=True, hold_if=condition, breakpoints=frozenset({"after"})
    )
    engine.execute(spec, lambda: 1, settle=lambda r: Settled(r, {"a": r}, {"n": 2}, owned=True))
    assert got == [{"q": "x"}] and type(got[0]["q"]) is str
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    started = hub.of_type("node.started")[-1]
    assert started["input"] == {"q": "x"}
    assert finished["output"] == {"a": 1} and finished["usage"] == {"n": 2}
    assert [(p["gate"], p["input"], p.get("output")) for p in paused] == [
        ("before", {"q": "x"}, None),
        ("after", {"q": "x"}, {"a": 1}),
    ]


@pytest.mark.parametrize(
    ("message", "plain"),
    [
        ({"role": "assistant", "content": "hi", "refusal": None}, True),
        ({"role": "assistant", "content": "h\u00e9", "n": 1, "x": 1.5, "ok": True}, True),
        ({"role": "assistant", "tool_calls": [{"id": "c1", "name": "f", "arguments": "{}"}]}, True),
        ({"role": "assistant", "tool_calls": []}, True),
        ({"role": Role.USER, "content": "hi"}, False),  # a StrEnum: to_jsonable changes it
        ({"role": "user", "content": Text("hi")}, False),
        ({"role": "user", "content": "\ud800"}, False),  # a lone surrogate
        ({"role": "user", "score": math.nan}, False),
        ({"role": "user", "content": [{"type": "text", "text": "hi"}]}, False),  # content blocks: the app's
        ({"role": "assistant", "tool_calls": [{"id": "c1", "arguments": {"q": 1}}]}, False),  # nested args
        ({"role": "assistant", "tool_calls": ({"id": "c1"},)}, False),  # a tuple is not a list built here
        ({"role": "assistant", "tool_calls": ["c1"]}, False),
        ([("role", "user")], False),
        (None, False),
    ],
)
def test_plain_message_is_the_one_proof_a_describer_can_own_a_message(message: Any, plain: bool) -> None:
    assert plain_message(message) is plain


@pytest.mark.parametrize(
    ("args", "kwargs", "owned"),
    [
        (("q", 1, True), {}, True),
        (("é", None, 2.5), {}, True),
        (("q",), {"limit": 3, "fuzzy": False}, True),
        (("q", math.nan, True), {}, False),
        (("\ud800", 1, True), {}, False),
        ((["q"], 1, True), {}, False),
        (("q", 1, {"nested": True}), {}, False),
        ((b"q", 1, True), {}, False),
    ],
)
def test_a_gated_tool_owns_its_input_only_when_every_argument_is_a_json_scalar(
    args: tuple[Any, ...], kwargs: dict[str, Any], owned: bool
) -> None:
    """The describer's dict of the call's arguments is fresh: the node owns it (no pipeline copy)
    exactly when each value is a JSON scalar; the recorded input is the same either way."""
    client, seen = _client()
    recorded: list[dict[str, Any]] = []
    client._tap = recorded.append  # what the ring got, as the pytest plugin's recorder sees it

    def search(query: Any, limit: Any = 0, fuzzy: Any = False) -> int:
        return 1

    client.wrap(search)(*args, **kwargs)
    client.dispose()
    assert [f for f in seen.flags if f[0] == "node.started"] == [("node.started", owned)]
    reference = EventPipeline(RedactionSwitches(), lambda _m: None)
    expected = reference.process(
        {"input": {**dict(zip(("query", "limit", "fuzzy"), args, strict=False)), **kwargs}}
    )
    assert expected is not None
    started = next(e for e in recorded if e["type"] == "node.started")
    assert protocol.encode(started["input"]) == protocol.encode(expected["input"])
