from __future__ import annotations

import json
import random
from typing import Any

import pytest

from graphmind._events.payload import MAX_PAYLOAD_BYTES, PREVIEW_CHARS, fits, shrink_oversized, shrink_text


def wire_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def test_small_values_are_returned_as_they_are() -> None:
    value = {"q": "x", "n": [1, 2.5, None, True]}
    assert shrink_oversized(value) is value
    assert shrink_oversized("short") == "short"


def test_an_oversized_string_becomes_the_marker() -> None:
    value = "a" * 600_000
    out = shrink_oversized(value)
    assert out == {
        "$graphmind": "truncated",
        "bytes": 600_002,
        "preview": ('"' + "a" * 600_000)[:PREVIEW_CHARS],
    }
    assert len(out["preview"]) == PREVIEW_CHARS


def test_the_limit_is_on_utf8_bytes_of_the_json_text() -> None:
    at_limit = "a" * (MAX_PAYLOAD_BYTES - 2)  # plus its two quotes: exactly the limit
    assert shrink_oversized(at_limit) is at_limit
    over = "a" * (MAX_PAYLOAD_BYTES - 1)
    assert shrink_oversized(over)["bytes"] == MAX_PAYLOAD_BYTES + 1
    # 200,000 characters but 600,002 bytes: é is two bytes in UTF-8.
    out = shrink_oversized("é" * 300_000)
    assert out["bytes"] == 600_002 == wire_size("é" * 300_000)


def test_a_cut_never_splits_a_character() -> None:
    out = shrink_oversized("😀" * 200_000)
    assert out["bytes"] == 800_002
    preview = out["preview"]
    assert len(preview) == PREVIEW_CHARS and preview[1:] == "😀" * (PREVIEW_CHARS - 1)
    preview.encode("utf-8")  # no lone surrogate anywhere
    json.dumps(out, ensure_ascii=False).encode("utf-8")


def test_an_oversized_structure_is_measured_as_a_whole() -> None:
    value = {"rows": [{"id": i, "text": "x" * 100} for i in range(6000)]}
    out = shrink_oversized(value)
    assert out["$graphmind"] == "truncated" and out["bytes"] == wire_size(value)
    assert out["preview"].startswith('{"rows":[{"id":0,"text":"xxx')


def test_escapes_count_as_written() -> None:
    value = "\x00" * 100_000  # each one is written as \u0000: six bytes
    assert shrink_oversized(value)["bytes"] == 600_002


def test_fits_is_a_safe_upper_bound() -> None:
    assert fits({"a": [1, 2, 3]})
    assert fits("x" * 100_000)
    assert not fits("x" * 200_000)  # the bound cannot prove it: measured exactly, and it does fit
    assert shrink_oversized("x" * 200_000) == "x" * 200_000
    assert fits([10**400])


def test_fits_never_says_yes_to_a_value_over_the_limit() -> None:
    rng = random.Random(5)
    chars = ['"', "\\", "'", "\n", "\x01", "\x7f", "\x85", "é", "€", "😀", "\u2028", "\U000e0001", "a", " "]

    def build(depth: int) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.5:
            return rng.choice(
                [
                    "".join(rng.choice(chars) for _ in range(rng.randint(0, 30))),
                    rng.randint(-(10**30), 10**30),
                    rng.random() * 1e300,
                    True,
                    False,
                    None,
                    1e16,
                    -0.0,
                ]
            )
        if roll < 0.75:
            return {
                "".join(rng.choice(chars) for _ in range(3)): build(depth + 1)
                for _ in range(rng.randint(0, 4))
            }
        return [build(depth + 1) for _ in range(rng.randint(0, 4))]

    for _ in range(3000):
        value = build(0)
        size = wire_size(value)
        for limit in (size - 1, size // 2, size * 2):
            if fits(value, limit):
                assert size <= limit, (value, limit)


def test_delta_text_keeps_a_string() -> None:
    assert shrink_text("hello") is None
    assert shrink_text("a" * 100_000) is None
    cut = shrink_text("b" * 600_000)
    assert cut == ("b" * PREVIEW_CHARS, 600_002)


@pytest.mark.parametrize(
    ("char", "width"),
    [("a", 1), ("é", 2), ("€", 3), ("\n", 2)],  # "\n" is spelled `\n` in JSON: two bytes
    ids=["ascii", "2-byte", "3-byte", "escaped"],
)
def test_delta_text_is_cut_exactly_past_the_limit(char: str, width: int) -> None:
    """The boundary of `shrink_text`: a text whose JSON spelling (quotes included) is exactly
    MAX_PAYLOAD_BYTES is kept; one byte more is cut, with its exact size."""
    count, extra = divmod(MAX_PAYLOAD_BYTES - 2, width)
    at_limit = char * count + "a" * extra
    assert len(json.dumps(at_limit, ensure_ascii=False).encode()) == MAX_PAYLOAD_BYTES
    assert shrink_text(at_limit) is None
    over = at_limit + "a"
    assert shrink_text(over) == (over[:PREVIEW_CHARS], MAX_PAYLOAD_BYTES + 1)


@pytest.mark.parametrize("char", ["a", "\x00", '"', "é", "\U0001f600"])
def test_a_flat_dict_is_measured_without_repr_and_still_cut_exactly_past_the_limit(char: str) -> None:
    """A tool call's flat arguments skip repr(): the bound must still cut exactly what is over."""
    from graphmind._events.payload import encoded_size, shrink_measured

    width = len(json.dumps(char, ensure_ascii=False).encode()) - 2  # JSON bytes per character
    for n in (
        0,
        1,
        MAX_PAYLOAD_BYTES // (6 * width) - 8,
        MAX_PAYLOAD_BYTES // width - 12,
        MAX_PAYLOAD_BYTES // width + 1,
    ):
        for value in ({"q": char * n, "n": 1, "b": True, "z": None, "f": 1.5}, {"k" * 3: char * n}):
            out, size = shrink_measured(value)
            fits_exactly = encoded_size(value)[0] <= MAX_PAYLOAD_BYTES
            assert (out is value) is fits_exactly, (char, n)
            assert size > 0
    big = {"n": 7**2000}  # an int past the flat bound (±10**15): measured through repr()
    assert shrink_measured(big)[0] is big
