"""Frame parsing for `WS /ingest`: a frame's object and the exact text the hub stores, and a batch
frame's entries each as if it had come alone (docs/protocol.md, "Batch frames")."""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from graphmind import protocol as proto

BATCH_HEAD = '{"type":"batch",'


class BadFrame(ValueError):
    pass


def _nonfinite(_: str) -> None:
    raise BadFrame("nonfinite")


def _float(text: str) -> float:
    value = float(text)
    if value - value != 0:  # 1e400 parses as inf
        raise BadFrame(f"the number {text[:40]} is out of range (JSON numbers here must be finite doubles)")
    return value


# Built once: json.loads(text, parse_constant=...) would build a decoder per frame (the hot path).
# A float hook costs little (integers keep the C fast path): 1e400 is refused, not stored as Infinity.
_DECODER = json.JSONDecoder(parse_constant=_nonfinite, parse_float=_float)
_LENIENT = json.JSONDecoder(parse_constant=lambda _: None, parse_float=_float)


def parse_frame(text: str) -> tuple[dict[str, Any], str]:
    """The frame as an object and the text to store (BadFrame with a reason otherwise)."""
    try:
        try:
            obj = _DECODER.decode(text)
        except BadFrame as exc:
            if str(exc) != "nonfinite":
                raise
            # The literals NaN / Infinity are not JSON, but Python's json.dumps writes them: keep the
            # event and store those values as null, so every reader can parse what the hub hands back.
            obj = _LENIENT.decode(text)
            text = json.dumps(obj, separators=(",", ":"))
    except BadFrame:
        raise
    except (ValueError, RecursionError) as exc:
        raise BadFrame(f"frame is not JSON ({str(exc)[:200]})") from None
    return _checked(obj), text


def _checked(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise BadFrame("a frame must be a JSON object")
    if not isinstance(obj.get("type"), str):
        raise BadFrame("a frame needs a string field 'type'")
    return obj


Entry = tuple[dict[str, Any], str] | BadFrame
_PLAIN = json.JSONDecoder()  # reads NaN and 1e400 too: only to find where such an entry ends
# …and an integer of more than 4,300 digits (which int() refuses): an entry holding one is refused
# on its own, not the whole batch around it.
_ANY = json.JSONDecoder(parse_int=lambda _: 0)
_SPACE = re.compile(r"[ \t\n\r]*")
_WHITESPACE = frozenset(" \t\n\r")


def _skip(text: str, i: int) -> int:
    """The index of the first character at or after `i` that is not JSON whitespace."""
    if text[i : i + 1] not in _WHITESPACE:  # compact JSON (every SDK's): no regex call (issue 38)
        return i
    match = _SPACE.match(text, i)
    return match.end() if match else i


def parse_batch(text: str) -> list[Entry]:
    """A batch frame's entries, each as parse_frame would return it had it come alone (the object
    and the exact text to store), or the BadFrame it would have raised. BadFrame for a frame that is
    not a well-formed batch: then none of its entries is taken."""
    try:
        entries = _scan_batch(text)
    except BadFrame:
        raise
    except (ValueError, IndexError, RecursionError) as exc:
        raise BadFrame(
            f"a batch frame must be a JSON object with a list 'events' ({str(exc)[:200]})"
        ) from None
    if entries is None:
        raise BadFrame("a batch frame needs a list 'events'")
    return entries


def _scan_batch(text: str) -> list[Entry] | None:
    """Walks the top-level object key by key (any order, any spacing), decoding each entry of
    `events` on its own so its text is known; json.loads would lose where each one starts and ends."""
    i = _skip(text, 0)
    if text[i : i + 1] != "{":
        raise ValueError("not an object")
    i = _skip(text, i + 1)
    kind: Any = None
    entries: list[Entry] | None = None
    if text[i : i + 1] == "}":
        i += 1
    else:
        while True:
            if text[i : i + 1] != '"':
                raise ValueError(f"expected a key at {i}")
            key, i = scanstring(text, i + 1)
            i = _skip(text, i)
            if text[i : i + 1] != ":":
                raise ValueError(f"expected ':' at {i}")
            i = _skip(text, i + 1)
            if key == "events" and text[i : i + 1] == "[":
                entries, i = _scan_entries(text, i + 1)
            else:
                value, i = _PLAIN.raw_decode(text, i)
                if key == "type":
                    kind = value
                elif key == "events":
                    entries = None  # not a list
            i = _skip(text, i)
            sep = text[i : i + 1]
            i = _skip(text, i + 1)
            if sep == "}":
                break
            if sep != ",":
                raise ValueError(f"expected ',' or '}}' at {i}")
    if _skip(text, i) != len(text):
        raise ValueError("extra data after the object")
    if kind != proto.BATCH:
        raise BadFrame("not a batch frame")
    return entries


def _scan_entries(text: str, i: int) -> tuple[list[Entry], int]:
    entries: list[Entry] = []
    i = _skip(text, i)
    if text[i : i + 1] == "]":
        return entries, i + 1
    while True:
        start = i
        try:
            obj, i = _DECODER.raw_decode(text, start)
            entry: Entry = (_checked(obj), text[start:i])
        except BadFrame as exc:
            if i == start:  # the decoder refused NaN or 1e400: decided as parse_frame would
                _, i = _ANY.raw_decode(text, start)
                try:
                    entry = parse_frame(text[start:i])
                except BadFrame as inner:
                    entry = inner
            else:
                entry = exc
        except ValueError as exc:
            if "digits" not in str(exc):
                raise  # not JSON at all: the batch is not well formed
            _, i = _ANY.raw_decode(text, start)
            entry = BadFrame(f"frame is not JSON ({str(exc)[:200]})")
        entries.append(entry)
        sep = text[i : i + 1]
        if sep != ",":  # the compact case is one comparison; anything else takes the general path
            i = _skip(text, i)
            sep = text[i : i + 1]
        i = _skip(text, i + 1)
        if sep == "]":
            return entries, i
        if sep != ",":
            raise ValueError(f"expected ',' or ']' at {i}")
