"""`owned_copy`: a describer's fresh copy of a plain JSON value, and whether it may be claimed owned.

A describer that records a framework's dict (a tool's arguments, a tool's result dict, a function
response inside a transcript) must not hand core the framework's own containers (the app and the
framework keep them; docs/adapters.md, "The describer contract"). A JSON round trip copies them,
but it sets up an encoder and a decoder per value (~8 Python calls each), and the pipeline then
walks the copy again because nothing says the copy is fresh. For the common value, exact dicts with
`str` keys, lists and `json_scalar` leaves, `owned_copy` copies directly and says so: the describer
can then claim the value owned (`NodeSpec.owned`, `Settled.owned`, `Owned(...)`) and the pipeline
keeps only its size bound.
"""

from __future__ import annotations

from typing import Any

from .jsonsafe import json_scalar

__all__ = ["OWNED_DEPTH", "owned_copy"]

OWNED_DEPTH = 32
"""Containers nested deeper than this are not copied by `owned_copy` (a cycle ends there too)."""


class _NotPlain(Exception):
    """A value the direct copy does not take."""


def owned_copy(value: Any) -> tuple[Any, bool]:
    """(a fresh copy of `value`, True) when `value` is plain JSON: exact dicts with `str` keys, lists
    and tuples (copied as lists), every leaf a `json_scalar`, nested at most `OWNED_DEPTH` deep. The
    copy shares no container with `value` and equals what `to_jsonable` (or a JSON round trip) makes
    of it, so a describer may hand it to the engine as owned (docs/adapters.md, "Owned payloads").

    Anything else (a NaN, bytes, a lone surrogate, a str subclass, an enum, a non-str key, an app
    object, a set, a cycle): (`value` itself, False). The describer then converts it its own way,
    or passes it on unclaimed, and the pipeline's full pass copies it."""
    try:
        return _copy(value, 0), True
    except _NotPlain:
        return value, False


def _copy(value: Any, depth: int) -> Any:
    # The common leaves (an ASCII str, an int, a bool, None) are kept inline in the loops below:
    # no call per leaf. Any other leaf comes back here once, to `json_scalar`.
    t = type(value)
    if t is dict:
        if depth >= OWNED_DEPTH:
            raise _NotPlain
        depth += 1
        out: dict[str, Any] = {}
        for k, v in value.items():
            if type(k) is not str or not (k.isascii() or json_scalar(k)):
                raise _NotPlain
            tv = type(v)
            if (tv is str and v.isascii()) or tv is int or tv is bool or v is None:
                out[k] = v
            else:
                out[k] = _copy(v, depth)
        return out
    if t is list or t is tuple:
        if depth >= OWNED_DEPTH:
            raise _NotPlain
        depth += 1
        return [
            v
            if (type(v) is str and v.isascii()) or type(v) is int or type(v) is bool or v is None
            else _copy(v, depth)
            for v in value
        ]
    if json_scalar(value):
        return value
    raise _NotPlain
