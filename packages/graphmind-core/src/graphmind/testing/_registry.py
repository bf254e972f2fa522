"""The gate matrix's cases by name, in the order they were written (gate_matrix.py, _edit_cases.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ._case import Case

CASES: list[str] = []
CASE_FNS: dict[str, Callable[[Case], Awaitable[None]]] = {}


def _case(fn: Callable[[Case], Awaitable[None]]) -> Callable[[Case], Awaitable[None]]:
    CASES.append(fn.__name__)
    CASE_FNS[fn.__name__] = fn
    return fn
