"""`graphmind.adapter.owned_copy` (docs/adapters.md, "Owned payloads"): plain JSON values are copied
directly, share no container with the original, and equal what the pipeline's snapshot and a JSON
round trip make of them; anything else comes back as it is, not claimed."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import pytest
from pydantic import BaseModel

from graphmind._events.jsonsafe import to_jsonable
from graphmind.adapter import owned_copy


class Colour(enum.IntEnum):
    RED = 1


class Name(str):
    pass


class Shape(BaseModel):
    sides: int = 3


def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"d": value}
    return value


PLAIN: list[Any] = [
    {"city": "Cairo", "days": 2, "hot": True, "rain": None, "temp": 31.5, "zero": -0.0},
    {"nested": {"list": [1, "two", [3.0, {"deep": "é ✓"}]], "empty": {}}, "tuple": (1, 2)},
    {"é ✓ key": "\U0001f600"},
    ["a", 10**40, False],
    (),
    "plain text",
    "non-ASCII ✓",
    42,
    1.5,
    None,
    _deep(32),
]

ODD: list[Any] = [
    math.nan,
    {"x": math.nan},
    {"x": [math.inf]},
    {"x": b"bytes"},
    {"x": "lone \ud800 surrogate"},
    {"lone \udc00": 1},
    {"x": Colour.RED},
    {"x": Name("sub")},
    Name("sub"),
    {1: "int key"},
    {"x": Shape()},
    {"x": object()},
    {"x": {"y": {1, 2}}},
    _deep(33),
]


@pytest.mark.parametrize("value", PLAIN)
def test_plain_json_is_copied_and_claimed(value: Any) -> None:
    copy, owned = owned_copy(value)
    assert owned
    assert copy == json.loads(json.dumps(value))  # the JSON round trip's value, tuples as lists
    assert json.dumps(copy) == json.dumps(value)
    assert to_jsonable(copy) == copy == to_jsonable(value)  # what the pipeline's walk would make of it


@pytest.mark.parametrize("value", ODD)
def test_anything_else_is_handed_back_unclaimed(value: Any) -> None:
    copy, owned = owned_copy(value)
    assert not owned
    assert copy is value


def test_the_copy_shares_no_container_with_the_original() -> None:
    args = {"cities": ["Cairo"], "opts": {"fast": True}, "pair": ("a", ["b"])}
    copy, owned = owned_copy(args)
    assert owned
    args["cities"].append("Giza")
    args["opts"]["fast"] = False
    args["pair"][1].append("c")
    assert copy == {"cities": ["Cairo"], "opts": {"fast": True}, "pair": ["a", ["b"]]}


def test_a_cycle_is_not_claimed_and_does_not_recurse_forever() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert owned_copy(loop) == (loop, False)
    items: list[Any] = []
    items.append(items)
    assert owned_copy(items)[1] is False
