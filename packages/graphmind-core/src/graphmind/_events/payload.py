"""Oversized payloads: a value whose JSON is over 512 KB leaves the app as a preview.

The marker (docs/protocol.md, "Oversized payloads")::

    {"$graphmind": "truncated", "bytes": <UTF-8 size of the full JSON text>,
     "preview": "<the first 65,536 characters of that JSON text>"}

Python strings are code points, so slicing never splits a character; `to_jsonable` has already
replaced lone surrogates, so the preview never carries one.

Encoding every payload to measure it would double the JSON cost of every event, so `fits` first
bounds the encoded size from the length of repr() (C speed); only values that might be big are
encoded for real.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "MAX_PAYLOAD_BYTES",
    "PREVIEW_CHARS",
    "approx_size",
    "encoded_size",
    "fits",
    "shrink_measured",
    "shrink_oversized",
    "shrink_text",
]

MAX_PAYLOAD_BYTES = 524_288
PREVIEW_CHARS = 65_536
TRUNCATED = "truncated"

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# The C string encoder json.dumps uses (falls back to the pure-Python one where C is missing).
_encode_str = json.encoder.encode_basestring
# Worst case bytes per code point in JSON text: a control character escaped as \u00XX.
_WORST = 6
# Worst case bytes of JSON per character of repr() (see `fits`).
_REPR_FACTOR = 4


def _str_bound(text: str) -> int:
    return _WORST * len(text) + 3


def fits(value: Any, limit: int = MAX_PAYLOAD_BYTES) -> bool:
    """True when `value`'s compact JSON encoding is certainly at most `limit` UTF-8 bytes.

    False means "maybe larger": the caller measures exactly. `value` must be JSON-safe (made of
    dict/list/str/int/float/bool/None, as `to_jsonable` returns). Then every character of its
    repr() stands for at most 4 bytes of JSON: a character JSON escapes (`"`, `\\`, a control
    character) is already 2 to 4 characters in repr(), a non-ASCII one is 1 character and at most 4
    UTF-8 bytes, and repr() writes `, ` and `: ` where JSON writes `,` and `:`. repr() runs in C,
    which beats walking the value in Python for the small payloads nearly every event carries.
    """
    try:
        return len(repr(value)) * _REPR_FACTOR <= limit
    except Exception:  # an int too long for repr(), or not JSON-safe after all
        return False


def encoded_size(value: Any) -> tuple[int, str]:
    """(UTF-8 size, JSON text) of `value`'s compact encoding, as the transport will write it."""
    text = _encoder.encode(value)
    if text.isascii():
        return len(text), text
    return len(text.encode("utf-8", "surrogatepass")), text


def approx_size(value: Any) -> int:
    """About how many characters `value` (JSON-safe) takes as JSON: a hint for the replay buffer's
    byte budget, not a bound. A string counts its length, anything else the length of its repr()."""
    t = type(value)
    if t is str:
        return len(value) + 2
    if t is int or t is float or t is bool or value is None:
        return 8
    try:
        return len(repr(value))
    except Exception:
        return 64


# A flat dict (`_flat_chars`): at most this many keys, ints within ±_BIG (at most 16 digits).
FLAT_KEYS = 32
_BIG = 10**15
# JSON characters at most, besides the key's and a str's own: quotes, colon, comma; a number's digits.
_PAIR, _NUMBER = 6, 24


def _flat_chars(value: dict[str, Any]) -> int | None:
    """About how many characters a flat dict takes as JSON (a tool call's arguments: str keys, each
    value a str, an int, a bool, None or a float), counted without a repr() of it; None for any other
    dict. A str of n characters is at most 6n bytes of JSON (`_WORST`), so a total under
    MAX_PAYLOAD_BYTES / 6 is certainly within the bound."""
    chars = 2
    for k, v in value.items():
        t = type(v)
        if t is str:
            chars += len(k) + len(v) + _PAIR
        elif t is bool or v is None or t is float or (t is int and -_BIG < v < _BIG):
            chars += len(k) + _PAIR + _NUMBER
        else:
            return None
    return chars


# The longest str value of an input the loop guard keeps as its streak key (fingerprint.FLAT_MAX_CHARS).
FLAT_STR = 256


def flat_scalar_chars(arguments: dict[str, Any]) -> int | None:
    """A gated call's bound arguments (a dict its describer just built, str keys), measured in one
    pass when every value is a JSON scalar the cheap way — an ASCII str of at most 256 characters,
    an int within ±10**15, a bool, None, a finite float — and at most 32 of them: about how many
    characters its JSON takes (`_flat_chars`' count, within MAX_PAYLOAD_BYTES for certain). None
    for anything else. Such an input is owned (no copy), flat for the loop guard (its own streak
    key) and measured for the pipeline (no visit): `NodeSpec.input_chars`."""
    if len(arguments) > FLAT_KEYS:
        return None
    chars = 2
    for k, v in arguments.items():
        t = type(v)
        if t is str:
            if len(v) > FLAT_STR or not v.isascii():
                return None
            chars += len(k) + len(v) + _PAIR
        elif (t is int and -_BIG < v < _BIG) or t is bool or v is None or (t is float and v - v == 0):
            chars += len(k) + _PAIR + _NUMBER
        else:
            return None
    return chars if chars * _WORST <= MAX_PAYLOAD_BYTES else None


def shrink_measured(value: Any) -> tuple[Any, int]:
    """(`value` unchanged, or the truncated marker when its JSON is over MAX_PAYLOAD_BYTES; about
    how many characters that takes as JSON). The size comes from the check itself, for free."""
    if type(value) is dict and len(value) <= FLAT_KEYS:
        chars = _flat_chars(value)
        if chars is not None and chars * _WORST <= MAX_PAYLOAD_BYTES:
            return value, chars
    try:
        bound = len(repr(value))
    except Exception:  # an int too long for repr(), or not JSON-safe after all
        bound = -1
    if 0 <= bound * _REPR_FACTOR <= MAX_PAYLOAD_BYTES:
        return value, bound
    try:
        size, text = encoded_size(value)
    except Exception:
        try:  # not JSON-safe after all (a caller skipped to_jsonable): measure what it would show
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
            size = len(text.encode("utf-8", "surrogatepass"))
        except Exception:  # e.g. an int too long to print: nothing sensible to measure
            return value, max(bound, 64)
    if size <= MAX_PAYLOAD_BYTES:
        return value, size
    return {"$graphmind": TRUNCATED, "bytes": size, "preview": text[:PREVIEW_CHARS]}, PREVIEW_CHARS + 64


def shrink_oversized(value: Any) -> Any:
    """`value` unchanged, or the truncated marker when its JSON is over MAX_PAYLOAD_BYTES."""
    return shrink_measured(value)[0]


def shrink_text(text: str) -> tuple[str, int] | None:
    """For a streamed delta's text: None when it fits, else (the cut text, full JSON size in bytes).

    A delta keeps `v` a string (viewers concatenate deltas), so its cut is the first PREVIEW_CHARS
    characters of the text itself, not of its JSON spelling.
    """
    if _str_bound(text) <= MAX_PAYLOAD_BYTES:
        return None
    encoded = _encode_str(text)
    size = len(encoded) if encoded.isascii() else len(encoded.encode("utf-8", "surrogatepass"))
    if size <= MAX_PAYLOAD_BYTES:
        return None
    return text[:PREVIEW_CHARS], size
