"""Replays tests/fixtures/redaction-conformance.json byte for byte (format: docs/redaction-conformance.md)."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from graphmind._events.pipeline import EventPipeline
from graphmind._events.redaction import RedactionSwitches

FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "redaction-conformance.json"


# ---- the fixture's "native" notation, built as Python values ---------------------------------
class ProxyLike:
    """Every attribute access raises, like a JavaScript Proxy whose traps all throw."""

    def __init__(self, message: str) -> None:
        object.__setattr__(self, "_message", message)

    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError(object.__getattribute__(self, "_message"))

    def __repr__(self) -> str:
        raise RuntimeError(object.__getattribute__(self, "_message"))


class ThrowingMap(Mapping[str, Any]):
    """A mapping that has a key but raises when its value is read (a throwing getter)."""

    def __init__(self, message: str) -> None:
        self._message = message

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError(self._message)

    def __iter__(self) -> Iterator[str]:
        return iter(["secret"])

    def __len__(self) -> int:
        return 1

    def items(self) -> Any:
        raise RuntimeError(self._message)


def enum_member(value: Any) -> enum.Enum:
    make: Any = enum.Enum
    member: enum.Enum = make("FixtureEnum", {"MEMBER": value})["MEMBER"]
    return member


def native_key(spec: Any) -> Any:
    if isinstance(spec, str):
        return spec
    ((tag, arg),) = spec.items()
    builders: dict[str, Any] = {
        "$int": int,
        "$bool": bool,
        "$bytes": lambda text: text.encode("utf-8"),
        "$enum": enum_member,
    }
    return builders[tag](arg)


def native(spec: Any) -> Any:
    """Build the Python value a fixture's `native` notation describes."""
    if isinstance(spec, list):
        return [native(item) for item in spec]
    if not isinstance(spec, dict):
        return spec
    if len(spec) == 1:
        ((tag, arg),) = spec.items()
        if tag == "$map":
            return {native_key(k): native(v) for k, v in arg}
        if tag == "$throws":
            return ProxyLike(arg)
        if tag == "$throwingMap":
            return ThrowingMap(arg)
        if tag == "$repeat":
            return arg[0] * arg[1]
        if tag == "$enum":
            return enum_member(arg)
    return {k: native(v) for k, v in spec.items()}


# ---- replay ----------------------------------------------------------------------------------
def load_cases() -> list[dict[str, Any]]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]


def encode(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def replay(case: dict[str, Any]) -> str | None:
    event = native(case["native"]) if "native" in case else json.loads(json.dumps(case["in"]))
    warnings: list[str] = []
    out = EventPipeline(RedactionSwitches.from_wire(case["switches"]), warnings.append).process(event)
    if out is None:
        assert len(warnings) == 1, warnings
        return None
    assert warnings == []
    return encode(out)


CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_fixture_case_replays_byte_for_byte(case: dict[str, Any]) -> None:
    assert replay(case) == case["out"]


def test_fixture_names_are_unique_and_cover_every_switch_on_every_event_type() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    seen = {
        (c["in"]["type"], tuple(sorted(k for k, on in c["switches"].items() if on)))
        for c in CASES
        if "in" in c
    }
    types = {t for t, _ in seen}
    assert {
        "node.started",
        "node.token",
        "node.finished",
        "node.error",
        "exec.paused",
        "exec.resumed",
        "run.started",
        "run.finished",
        "graph.hint",
    } <= types
    for event_type in types:
        for switch in ("hideInputs", "hideOutputs", "hideToolArgs", "hideToolResults"):
            assert (event_type, (switch,)) in seen, (event_type, switch)


def test_the_real_server_examples_are_in_the_fixture() -> None:
    outs = {c["name"]: c["out"] for c in CASES}
    assert (
        '"deltas":[{"t":"text","v":"","chars":5}],"redaction":{"count":1,"keys":["deltas"]}'
        in outs["seed: HIDE_OUTPUTS llm:step node.token"]
    )
    assert outs["seed: HIDE_OUTPUTS llm:step node.finished"].count('"output":"__REDACTED__"') == 1
    assert '"output":"hello"' in outs["seed: HIDE_TOOL_RESULTS llm:step node.finished"]
    assert '"redaction"' not in outs["seed: HIDE_TOOL_RESULTS llm:step node.finished"]
    assert '"output":"__REDACTED__"' in outs["seed: HIDE_TOOL_RESULTS tool:search node.finished"]
    assert outs["seed: HIDE_TOOL_RESULTS tool:search node.finished"].endswith(
        ',"redaction":{"count":1,"keys":["output"]}}'
    )
