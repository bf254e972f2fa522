"""The pipeline's fast path for engine-built events gives exactly what the full pass gives."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

import graphmind
from graphmind._events.fields import _ENGINE_KEYS, _PAYLOAD_KEYS
from graphmind._events.payload import shrink_measured
from graphmind._events.pipeline import EventPipeline
from graphmind._events.redaction import RedactionSwitches


class Capture(EventPipeline):
    """Records what the engine hands the pipeline, with the trusted flag it passed."""

    def __init__(self) -> None:
        super().__init__(RedactionSwitches(False, False, False, False), lambda _m: None)
        self.seen: list[tuple[dict[str, Any], bool, tuple[str, ...] | None]] = []
        self.measured: list[int] = []

    def process_sized(
        self,
        event: dict[str, Any],
        trusted: bool = False,
        owned: bool = False,
        payload: tuple[str, ...] | None = None,
        measured: int = 0,
    ) -> tuple[dict[str, Any], int] | None:
        self.seen.append((copy.copy(event), trusted, payload))
        self.measured.append(measured)
        return super().process_sized(event, trusted, owned, payload, measured)


class Odd:
    def __init__(self) -> None:
        self.x = 1


INPUTS: list[Any] = [
    ("q", 1, True),
    ("é", 2.5, None),
    ({"nested": [1, {"k": "v"}]}, math.nan, b"\x00\xff"),
    (Odd(), {1: "int key"}, "\ud800 lone surrogate"),
    ("x" * 600_000, 0, False),
    ((1, 2), {"set"}, -math.inf),
]


@pytest.mark.parametrize("name", ["search", "búsqueda"])
def test_trusted_events_come_out_as_the_full_pass_makes_them(name: str) -> None:
    client = graphmind.Client(app="t", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    capture = Capture()
    client._pipeline = capture
    tool = client.wrap(lambda a, b, c: (a, b, c), name=name)
    with client.span("think", kind="llm") as span:
        span.token("hé")
        span.output = {"text": "done", "n": 1.5}
    for args in INPUTS:
        tool(*args)
    failing = client.wrap(lambda: 1 / 0, name=name)
    with pytest.raises(ZeroDivisionError):
        failing()
    client.dispose()
    trusted = [(e, t) for e, t, _ in capture.seen if t]
    tool_events = [e for e, _ in trusted if e.get("name") == name]
    assert len(tool_events) >= 2 * len(INPUTS) if name.isascii() else tool_events == []
    # The engine names the payload fields of a node's own events (most of them), exactly
    with_payload = [(e, p) for e, t, p in capture.seen if p is not None]
    assert len(with_payload) >= 2 * len(INPUTS)
    # …and leaves out an input its describer measured (NodeSpec.input_chars), with its size
    measured_inputs = 0
    for (event, _t, payload), measured in zip(capture.seen, capture.measured, strict=True):
        if payload is None:
            continue
        assert event.keys() <= _ENGINE_KEYS
        left_out = {"input"} if measured else set()
        assert set(payload) | left_out == _PAYLOAD_KEYS.intersection(event)
        if measured:
            measured_inputs += 1
            assert event["input"] in ({"a": "q", "b": 1, "c": True}, {})  # INPUTS' flat one, `failing`'s
            assert measured == shrink_measured(event["input"])[1]  # the size the visit would count
    assert measured_inputs == 2
    reference = EventPipeline(RedactionSwitches(False, False, False, False), lambda _m: None)
    for (event, flag, payload), measured in zip(capture.seen, capture.measured, strict=True):
        fast = reference.process_sized(copy.copy(event), flag, False, payload, measured)
        slow = reference.process_sized(copy.copy(event), flag)
        full = reference.process(copy.copy(event), False)
        assert fast is not None and slow is not None
        assert graphmind.protocol.encode(fast[0]) == graphmind.protocol.encode(full)  # type: ignore[arg-type]
        assert fast[1] == slow[1]  # the same size, measured by the describer or by the visit
