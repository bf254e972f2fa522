from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import pathlib
import uuid
from collections import deque
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import pydantic
import pytest

from graphmind._events.jsonsafe import CIRCULAR, TOO_DEEP, UnreadableValue, json_key, to_jsonable


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class Colour(enum.Enum):
    RED = "red"
    ONE = 1


class Point(NamedTuple):
    x: int
    y: int


@dataclasses.dataclass
class Query:
    q: str
    tags: list[str]


class Model(pydantic.BaseModel):
    name: str
    when: datetime.date


class Plain:
    def __init__(self) -> None:
        self.visible = 1
        self._hidden = 2


class ProxyLike:
    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError("proxy trap")


class ThrowingMap(Mapping[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(["a"])

    def __len__(self) -> int:
        return 1

    def items(self) -> Any:
        raise PermissionError("no peeking")


class BadStr(Exception):
    def __str__(self) -> str:
        raise ValueError("worse")


class BadRepr:
    __slots__ = ()

    def __repr__(self) -> str:
        raise BadStr()


def test_plain_values_come_back_equal_but_copied() -> None:
    value: dict[str, Any] = {"a": [1, 2.5, "x", None, True], "b": {"c": "d"}}
    out = to_jsonable(value)
    assert out == value
    assert out is not value and out["a"] is not value["a"]
    value["a"].append("later")
    assert out["a"] == [1, 2.5, "x", None, True]


def test_non_finite_floats_become_strings_json_accepts() -> None:
    out = to_jsonable([float("nan"), float("inf"), float("-inf"), 1.5])
    assert out == ["NaN", "Infinity", "-Infinity", 1.5]
    dumps(out)


def test_non_string_keys_are_written_as_json_would() -> None:
    out = to_jsonable(
        {7: "int", True: "bool", None: "none", 1.5: "float", Colour.RED: "enum", b"raw": "bytes"}
    )
    assert out == {"7": "int", "true": "bool", "null": "none", "1.5": "float", "red": "enum", "raw": "bytes"}
    assert json.dumps({7: 1, True: 2, None: 3, 1.5: 4}) == json.dumps(
        to_jsonable({7: 1, True: 2, None: 3, 1.5: 4})
    )
    assert json_key(Colour.ONE) == "1"
    assert to_jsonable({(1, 2): "tuple"}) == {"(1, 2)": "tuple"}


def test_rich_python_types() -> None:
    when = datetime.datetime(2026, 9, 14, 12, 30, tzinfo=datetime.timezone.utc)
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    out = to_jsonable(
        {
            "model": Model(name="n", when=datetime.date(2026, 1, 2)),
            "dc": Query(q="x", tags=["a"]),
            "nt": Point(1, 2),
            "obj": Plain(),
            "enum": Colour.ONE,
            "when": when,
            "day": datetime.date(2026, 9, 14),
            "id": ident,
            "price": decimal.Decimal("1.10"),
            "path": pathlib.PurePosixPath("/tmp/x"),
            "set": {"b", "a", "c"},
            "deque": deque([1, 2]),
            "tuple": (1, "a"),
        }
    )
    assert out == {
        "model": {"name": "n", "when": "2026-01-02"},
        "dc": {"q": "x", "tags": ["a"]},
        "nt": {"x": 1, "y": 2},
        "obj": {"visible": 1},
        "enum": 1,
        "when": "2026-09-14T12:30:00+00:00",
        "day": "2026-09-14",
        "id": str(ident),
        "price": "1.10",
        "path": "/tmp/x",
        "set": ["a", "b", "c"],
        "deque": [1, 2],
        "tuple": [1, "a"],
    }
    dumps(out)


def test_bytes_are_a_length_and_a_preview() -> None:
    data = "é".encode() * 40  # 80 bytes: the 64-byte cut lands on a character boundary here
    assert to_jsonable(data) == {"$bytes": 80, "preview": "é" * 32}
    cut = to_jsonable(b"a" + "é".encode() * 40)  # now byte 64 splits an é: replaced, not an error
    assert cut["$bytes"] == 81 and cut["preview"].endswith("\ufffd") and len(cut["preview"]) == 33
    assert to_jsonable(bytearray(b"xy")) == {"$bytes": 2, "preview": "xy"}
    assert to_jsonable(memoryview(b"xyz")) == {"$bytes": 3, "preview": "xyz"}


def test_cycles_are_marked_and_shared_values_are_not() -> None:
    a: dict[str, Any] = {"name": "a"}
    a["self"] = a
    shared = [1]
    out = to_jsonable({"cycle": a, "one": shared, "two": shared})
    assert out == {"cycle": {"name": "a", "self": CIRCULAR}, "one": [1], "two": [1]}
    node = Plain()
    node.visible = node  # type: ignore[assignment]
    assert to_jsonable(node) == {"visible": CIRCULAR}
    wide: list[Any] = []
    wide.extend([wide, wide])  # would be 2**64 paths without cycle marking
    assert to_jsonable(wide) == [CIRCULAR, CIRCULAR]


def test_depth_over_64_is_cut() -> None:
    deep: list[Any] = []
    cur = deep
    for _ in range(100):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    out = to_jsonable(deep)
    depth = 0
    while isinstance(out, list):
        out = out[0]
        depth += 1
    assert out == TOO_DEEP and depth == 64


def test_unknown_objects_use_a_repr_cut_to_1000_chars() -> None:
    class Long:
        __slots__ = ()

        def __repr__(self) -> str:
            return "L" * 5000

    out = to_jsonable(Long())
    assert len(out) == 1000 and out.startswith("LLL")
    gen = (i for i in range(3))
    assert to_jsonable(gen) == "[generator <genexpr>: not consumed, so not recorded]"
    assert list(gen) == [0, 1, 2]  # describing it did not consume it
    assert to_jsonable(range(3)) == "range(0, 3)"
    assert to_jsonable(len) == "<built-in function len>"


def test_a_failing_read_becomes_an_unreadable_marker() -> None:
    out = to_jsonable({"proxy": ProxyLike(), "map": ThrowingMap(), "ok": 1})
    assert out == {
        "proxy": "[Unreadable: RuntimeError: proxy trap]",
        "map": "[Unreadable: PermissionError: no peeking]",
        "ok": 1,
    }
    assert to_jsonable(BadRepr()) == "[Unreadable: BadStr: <message unreadable>]"


def test_strict_mode_raises_unreadable_value() -> None:
    with pytest.raises(UnreadableValue) as info:
        to_jsonable({"deep": [{"x": ProxyLike()}]}, strict=True)
    assert isinstance(info.value.cause, RuntimeError)
    with pytest.raises(UnreadableValue):
        to_jsonable(ThrowingMap(), strict=True)
    assert to_jsonable({"fine": [1, "a"]}, strict=True) == {"fine": [1, "a"]}


def test_a_dict_changed_during_iteration_is_unreadable_not_an_error() -> None:
    target: dict[str, Any] = {}

    class Mutator:
        @property
        def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
            target[f"grown{len(target)}"] = 1  # user code that changes the dict being snapshotted
            return {"x": 1}

    target["a"] = Mutator()
    out = to_jsonable({"x": target})
    assert out == {"x": "[Unreadable: RuntimeError: dictionary changed size during iteration]"}
    with pytest.raises(UnreadableValue):
        to_jsonable({"y": target}, strict=True)


def test_lone_surrogates_are_replaced_and_pairs_joined() -> None:
    assert to_jsonable("a\ud800b") == "a\ufffdb"
    assert to_jsonable("\ud83d\ude00") == "😀"
    assert to_jsonable({"k\udc00": "v"}) == {"k\ufffd": "v"}
    dumps(to_jsonable(["\udfff", "ok é"])).encode("utf-8")


def test_subclasses_of_builtins_become_plain() -> None:
    class MyStr(str):
        pass

    class MyDict(dict):  # type: ignore[type-arg,unused-ignore]
        pass

    class MyFloat(float):
        pass

    out = to_jsonable(MyDict(a=MyStr("s"), b=MyFloat("nan"), c=MyFloat(2.5)))
    assert out == {"a": "s", "b": "NaN", "c": 2.5}
    assert type(out) is dict and type(out["a"]) is str


def test_a_zoo_always_encodes() -> None:
    zoo = [
        ProxyLike(),
        ThrowingMap(),
        BadRepr(),
        object(),
        Plain(),
        {1, 2},
        frozenset(),
        b"",
        float("nan"),
        Colour.RED,
    ]
    dumps(to_jsonable(zoo))
    dumps(to_jsonable({"zoo": zoo}))


def test_a_generator_or_coroutine_is_named_and_never_consumed() -> None:
    ran: list[int] = []

    def numbers() -> Iterator[int]:
        ran.append(1)
        yield 1

    async def later() -> int:
        ran.append(2)
        return 2

    gen = numbers()
    coro = later()
    assert to_jsonable(gen) == "[generator numbers: not consumed, so not recorded]"
    assert to_jsonable({"c": coro}) == {"c": "[coroutine later: not consumed, so not recorded]"}
    assert ran == [] and next(gen) == 1
    coro.close()
