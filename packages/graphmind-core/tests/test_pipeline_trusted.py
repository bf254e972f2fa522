"""The pipeline's fast path for engine-built events gives exactly what the full pass gives."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

import graphmind
from graphmind._events.fields import _ENGINE_KEYS, _PAYLOAD_KEYS
from graphmind._events.pipeline import EventPipeline
from graphmind._events.redaction import RedactionSwitches


class Capture(EventPipeline):
    """Records what the engine hands the pipeline, with the trusted flag it passed."""

    def __init__(self) -> None:
        super().__init__(RedactionSwitches(False, False, False, False), lambda _m: None)
        self.seen: list[tuple[dict[str, Any], bool, tuple[str, ...] | None]] = []

    def process_sized(
        self,
        event: dict[str, Any],
        trusted: bool = False,
        owned: bool = False,
        payload: tuple[str, ...] | None = None,
    ) -> tuple[dict[str, Any], int] | None:
        self.seen.append((copy.copy(event), trusted, payload))
        return super().process_sized(event, trusted, owned, payload)


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
    for event, payload in with_payload:
        assert event.keys() <= _ENGINE_KEYS
        assert set(payload) == _PAYLOAD_KEYS.intersection(event)
    reference = EventPipeline(RedactionSwitches(False, False, False, False), lambda _m: None)
    for event, flag, payload in capture.seen:
        fast = reference.process_sized(copy.copy(event), flag, False, payload)
        full = reference.process(copy.copy(event), False)
        assert fast is not None
        assert graphmind.protocol.encode(fast[0]) == graphmind.protocol.encode(full)  # type: ignore[arg-type]
