"""One pass over a gated call's arguments (`payload.flat_scalar_chars`) stands for three: the owned
check, the loop guard's flat check and the pipeline's size measure. Each decision it makes is the
one the three would have made (random inputs), and the gated call records the same either way."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

import graphmind
import graphmind._api.wrappers as wrappers
from graphmind._events.jsonsafe import json_scalars
from graphmind._events.payload import FLAT_KEYS, FLAT_STR, flat_scalar_chars, shrink_measured
from graphmind._loop.fingerprint import FLAT_MAX_CHARS, FLAT_MAX_KEYS, flat_owned

VALUES: list[Any] = [
    "q", "", "é", "x" * FLAT_STR, "x" * (FLAT_STR + 1), "\ud800", 0, -7, 10**15 - 1, 10**15, -(10**15),
    2**70, True, False, None, 1.5, -0.0, math.nan, math.inf, [1], {"k": 1}, (1,), b"b", 3j,
]  # fmt: skip


def _random_arguments(rnd: random.Random) -> dict[str, Any]:
    n = rnd.choice([0, 1, 3, 5, FLAT_KEYS, FLAT_KEYS + 1])
    return {f"k{i}" * rnd.choice([1, 3]): rnd.choice(VALUES) for i in range(n)}


def test_the_bounds_are_the_loop_guards() -> None:
    assert (FLAT_KEYS, FLAT_STR) == (FLAT_MAX_KEYS, FLAT_MAX_CHARS)


def test_one_pass_decides_as_the_owned_check_the_guard_and_the_measure_would() -> None:
    rnd = random.Random(27)
    measured = 0
    for _ in range(20_000):
        arguments = _random_arguments(rnd)
        chars = flat_scalar_chars(arguments)
        if chars is None:
            continue
        measured += 1
        assert json_scalars(arguments.values())  # owned, as the describer's check says
        assert flat_owned(arguments, frozenset()) is arguments  # flat, as the loop guard says
        assert shrink_measured(arguments) == (arguments, chars)  # measured, as the pipeline would
    assert 2_000 < measured < 19_000  # both answers were tried often


def test_what_it_refuses() -> None:
    assert flat_scalar_chars({"a": "x" * FLAT_STR}) is not None
    for value in ("x" * (FLAT_STR + 1), "é", 10**15, 2**70, math.nan, -math.inf, [1], {"k": 1}, b"b"):
        assert flat_scalar_chars({"a": value}) is None, value
    assert flat_scalar_chars({f"k{i}": i for i in range(FLAT_KEYS + 1)}) is None
    assert flat_scalar_chars({"k" * 100_000: 1}) is None  # over the payload bound: the pipeline measures it


def test_a_gated_call_records_the_same_with_and_without_the_measure(monkeypatch: pytest.MonkeyPatch) -> None:
    recorded: dict[bool, list[Any]] = {}
    for measure in (True, False):
        if not measure:  # the same engine with the describer's measure taken away
            monkeypatch.setattr(wrappers, "flat_scalar_chars", lambda _a: None)
        client = graphmind.Client(app="t", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
        events: list[dict[str, Any]] = []
        client._tap = events.append

        def search(query: Any, limit: Any = 5, fuzzy: Any = None) -> Any:
            return limit

        tool = client.wrap(search)
        with client.run("r"):
            for args in [("q", 1, True), ("é", 2), ("x" * 300, 0), ("q", 10**16), ("q", [1])]:
                tool(*args)
            tool("q", limit=3)
        assert client._transport is not None
        sizes = [entry[1] for entry in client._transport._ring]
        client.dispose()
        blank = {"ts": 0, "durationMs": 0, "instanceId": "", "runId": "", "parentInstanceId": ""}
        recorded[measure] = [{**e, **blank} for e in events] + [sizes]
    assert recorded[True] == recorded[False]
