from __future__ import annotations

import json
from typing import Any

from graphmind._payload import MAX_PAYLOAD_BYTES, PREVIEW_CHARS, fits, shrink_oversized, shrink_text


def wire_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def test_small_values_are_returned_as_they_are() -> None:
    value = {"q": "x", "n": [1, 2.5, None, True]}
    assert shrink_oversized(value) is value
    assert shrink_oversized("short") == "short"


def test_an_oversized_string_becomes_the_marker() -> None:
    value = "a" * 600_000
    out = shrink_oversized(value)
    assert out == {"$graphmind": "truncated", "bytes": 600_002, "preview": ('"' + "a" * 600_000)[:PREVIEW_CHARS]}
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
    assert not fits("x" * 100_000)  # 100 KB would fit, but the bound cannot prove it: measured exactly
    assert shrink_oversized("x" * 100_000) == "x" * 100_000
    big_int = 10**400
    assert fits([big_int])


def test_delta_text_keeps_a_string() -> None:
    assert shrink_text("hello") is None
    assert shrink_text("a" * 100_000) is None
    cut = shrink_text("b" * 600_000)
    assert cut == ("b" * PREVIEW_CHARS, 600_002)
