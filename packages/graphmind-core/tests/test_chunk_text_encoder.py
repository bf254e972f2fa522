"""A streaming tool's chunk text is encoded by the C encoder directly (_stream_tools._encode): the
same text, and the same errors, as `json.JSONEncoder(...).encode` it replaces."""

from __future__ import annotations

import json
from typing import Any

from graphmind._api.stream_tools import _encode, chunk_text

REFERENCE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class Opaque:
    pass


def _outcome(encode: Any, value: Any) -> tuple[str, str]:
    try:
        return ("text", encode(value))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def test_chunks_encode_exactly_as_the_stdlib_encoder_does() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    shared = {"k": 1}
    values: list[Any] = [
        {"flight": "TP1", "price": 91},
        [1, 2.5, None, True, False, -0.0, 1e300, 10**30],
        {"é": "😀\ud800", "q": 'a"b\\c\n'},
        {"x": {"y": [1, {"z": "q"}]}, "t": (1, 2)},
        [shared, shared],  # the same object twice is not a cycle
        {3: "int key", 2.5: "float key", True: "bool key", None: "none key"},
        [],
        {},
        0,
        "not a chunk shape, but encodable",
        float("nan"),
        {"a": float("inf")},
        {"a": Opaque()},
        cyclic,
        {(1, 2): 1},
    ]
    for value in values:
        assert _outcome(_encode, value) == _outcome(REFERENCE.encode, value), value


def test_chunk_text_is_one_json_line_per_non_text_chunk() -> None:
    assert chunk_text("partial text") == "partial text"
    assert chunk_text({"flight": "TP1", "price": 91}) == '{"flight":"TP1","price":91}\n'
