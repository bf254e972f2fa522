"""Where two JSON values differ, for `graphmind diff` (compare/runs.py): the path of each differing leaf
(`input.messages[39].content`) and a window of both values around the first differing character,
so a change deep in a long transcript prints as two lines that differ, not as two equal openings.

Equality is compare/runs.py's (canonical JSON: key order does not count). Ignored keys are dropped at
every depth before comparing, as `graphmind replay --ignore-keys` drops them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "(absent)"})()
BEFORE, AFTER = 60, 100  # characters of the window before and from the first difference
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def parse_keys(text: str | None) -> frozenset[str]:
    """`--ignore-keys a,b` / `?ignore=a,b` as a set (blanks dropped)."""
    return frozenset(k.strip() for k in (text or "").split(",") if k.strip())


def without(value: Any, keys: Iterable[str]) -> Any:
    """`value` with every object key in `keys` removed, at every depth (a new value; `value` is kept)."""
    keys = frozenset(keys)
    if not keys:
        return value

    def strip(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in keys}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    return strip(value)


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if _NAME.match(key) else f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def differences(a: Any, b: Any, path: str) -> list[tuple[str, Any, Any]]:
    """(path, A's value, B's value) of every differing leaf, in document order (A's key order, then
    B's new keys); a key or item only one side has is ABSENT on the other."""
    found: list[tuple[str, Any, Any]] = []

    def walk(x: Any, y: Any, where: str) -> None:
        if isinstance(x, dict) and isinstance(y, dict):
            for k in [*x, *(k for k in y if k not in x)]:
                vx, vy = x.get(k, ABSENT), y.get(k, ABSENT)
                if vx is ABSENT or vy is ABSENT or canon(vx) != canon(vy):
                    walk(vx, vy, _key(where, k))
        elif isinstance(x, list) and isinstance(y, list):
            for i in range(max(len(x), len(y))):
                vx = x[i] if i < len(x) else ABSENT
                vy = y[i] if i < len(y) else ABSENT
                if vx is ABSENT or vy is ABSENT or canon(vx) != canon(vy):
                    walk(vx, vy, f"{where}[{i}]")
        else:
            found.append((where, x, y))

    if canon(a) != canon(b):
        walk(a, b, path)
    return found


def _text(value: Any) -> str:
    return "" if value is ABSENT else value if isinstance(value, str) else canon(value)


def window(a: Any, b: Any) -> tuple[int, str, str]:
    """(index of the first differing character, A's window, B's window): each value's text (a
    string as it is, else its canonical JSON) from BEFORE characters before the first difference,
    AFTER characters long past it, escaped onto one line, `…` where it was cut."""
    ta, tb = _text(a), _text(b)
    at = next((i for i, (x, y) in enumerate(zip(ta, tb, strict=False)) if x != y), min(len(ta), len(tb)))
    start = max(0, at - BEFORE)

    def cut(value: Any, text: str) -> str:
        if value is ABSENT:
            return "(absent)"
        piece = text[start : at + AFTER]
        shown = json.dumps(piece, ensure_ascii=False)[1:-1] if isinstance(value, str) else piece
        opened = "…" if start > 0 else ""
        closed = "…" if len(text) > at + AFTER else ""
        quote = '"' if isinstance(value, str) else ""
        return f"{quote}{opened}{shown}{closed}{quote}"

    return at, cut(a, ta), cut(b, tb)


def report(field: str, a: Any, b: Any, shown: int = 5) -> list[str]:
    """The lines `graphmind diff` prints under a changed field: each differing path (up to `shown`)
    with both values around its first difference."""
    found = differences(a, b, field)
    lines: list[str] = []
    for where, x, y in found[:shown]:
        at, wa, wb = window(x, y)
        both_text = isinstance(x, str) and isinstance(y, str)
        place = (
            f" (first difference: character {at + 1:,} of {len(x):,} / {len(y):,})"
            if both_text and at > BEFORE
            else ""
        )
        lines += [f"    at {where}{place}:", f"      A: {wa}", f"      B: {wb}"]
    if len(found) > shown:
        lines.append(f"    … and {len(found) - shown} more differing places in {field}")
    return lines
