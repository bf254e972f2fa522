"""A search-index row made in Python from an event's stored text, for a writer that indexes in
the same transaction (`graphmind import`, the benchmarks' fill): the same row that search.INDEX_SQL
makes with `json_tree`, which took ~60 % of the index's cost and half of a big fill's time
(bench/year_of_runs.py). The row must be the very one the SQL makes (tests/test_index_text.py
compares both on every event): whatever this module is not sure to render as SQLite does (a float
in exponent form, a key SQLite would quote, NaN, a huge integer, a deep value...) is left to the
SQL (`None`), event by event.
"""

from __future__ import annotations

import json
import math
from typing import Any

# The top-level keys search.INDEX_SQL takes: these exactly, and every atom under a key starting
# with one of the prefixes (its GLOB '$.input*' also takes `$.inputs`, `$.metadata`...).
EXACT = frozenset({"name", "nodeId", "app"})
PREFIXES = ("input", "output", "error", "meta", "value")
MAX_DEPTH = 64  # deeper: left to the SQL (no Python recursion limit near)
_INT64 = 2**63


class _Unsure(Exception):
    """A value this module does not render as SQLite would for certain."""


SKIP = object()  # the event is not one the index takes (its type)


def row(
    cursor: int, run_id: str, etype: str, raw: str, indexed_types: tuple[str, ...]
) -> tuple[Any, ...] | object | None:
    """The index row (rowid, body, run_id, node_id, instance_id) for a stored event; SKIP when the
    index does not take it; None when the SQL should decide (search.INDEX_SQL)."""
    if etype not in indexed_types:
        return SKIP
    if "NaN" in raw or "Infinity" in raw:  # Python reads them, SQLite's json_valid does not
        return None
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if type(event) is not dict:
        return None
    parts: list[str] = []
    keys = [len(event)]  # every key of every object: a key given twice is one key to Python
    try:
        for key, value in event.items():
            if key in EXACT:
                if not isinstance(value, (dict, list)) and value is not None:
                    parts.append(_atom(value))
            elif key.startswith(PREFIXES):
                if not (key.isascii() and key.isalnum()):
                    return None  # SQLite quotes such a key in its path ('$."input x"'): no GLOB match
                _atoms(value, parts, 0, keys)
            elif isinstance(value, (dict, list)):
                _count_keys(value, keys, 0)
        node_id = _extracted(event.get("nodeId"))
        instance_id = _extracted(event.get("instanceId"))
    except _Unsure:
        return None
    # json_tree walks both values of a key given twice, Python keeps one. Each key in the text is
    # followed by `":` (a string holding `":` counts too, and is then left to the SQL).
    if raw.count('":') != keys[0]:
        return None
    return (cursor, " ".join(parts) if parts else None, run_id, node_id, instance_id)


def _atoms(value: Any, out: list[str], depth: int, keys: list[int]) -> None:
    """Every non-null scalar under `value`, in document order (json_tree's); counts the keys."""
    if isinstance(value, dict):
        if depth > MAX_DEPTH:
            raise _Unsure
        keys[0] += len(value)
        for item in value.values():
            _atoms(item, out, depth + 1, keys)
    elif isinstance(value, list):
        if depth > MAX_DEPTH:
            raise _Unsure
        for item in value:
            _atoms(item, out, depth + 1, keys)
    elif value is not None:
        out.append(_atom(value))


def _count_keys(value: Any, keys: list[int], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _Unsure
    if isinstance(value, dict):
        keys[0] += len(value)
        value = value.values()
    for item in value:
        if isinstance(item, (dict, list)):
            _count_keys(item, keys, depth + 1)


def _atom(value: Any) -> str:
    """A scalar as json_tree's `value` reads as text in group_concat."""
    if type(value) is str:
        if not value.isascii():
            try:
                value.encode("utf-8")  # a lone surrogate: SQLite's text would differ
            except UnicodeEncodeError:
                raise _Unsure from None
        if "\x00" in value:
            raise _Unsure
        return value
    if value is True:
        return "1"
    if value is False:
        return "0"
    if type(value) is int:
        if not -_INT64 < value < _INT64:
            raise _Unsure  # SQLite reads it as a REAL
        return str(value)
    if type(value) is float:
        # SQLite prints a REAL with "%!.15g": 15 significant digits, always a decimal point. A value
        # written with more digits (or an exponent) might parse an ulp apart there and print apart.
        shortest = repr(value)
        if not math.isfinite(value) or "e" in shortest or shortest == "-0.0":
            raise _Unsure
        if len(shortest.replace("-", "").replace(".", "").strip("0")) > 15:
            raise _Unsure
        text = f"{value:.15g}"
        if "e" in text:
            raise _Unsure
        return text if "." in text else text + ".0"
    raise _Unsure


def _extracted(value: Any) -> Any:
    """json_extract(body, '$.key') of a scalar (an object or array comes back as JSON text)."""
    if value is None or type(value) is str:
        if type(value) is str:
            _atom(value)
        return value
    if type(value) is bool:
        return int(value)
    if type(value) is int:
        _atom(value)
        return value
    raise _Unsure  # a float (SQLite's double may differ in its last bit), an object, an array
