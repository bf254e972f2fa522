"""Context window sizes by model (store/context_sizes.json, read like store/prices.py reads prices.json).

The shipped table names its sources; a user's own file (GRAPHMIND_CONTEXT_SIZES=path, same shape)
is merged over it, model by model. A model matches the longest row name it starts with, after any
`provider/` prefix, so dated snapshots share their family's window.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from ..base.modeltable import lookup, read_table

SHIPPED = Path(__file__).parent.parent / "store" / "context_sizes.json"
ENV = "GRAPHMIND_CONTEXT_SIZES"


class ContextSizesError(ValueError):
    """The override file cannot be used; str() is the one line to print."""


def _rows(doc: Any, where: str) -> dict[str, int]:
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, dict):
        raise ContextSizesError(f'{where} must be a JSON object with "models": {{name: tokens}}')
    out: dict[str, int] = {}
    for name, size in models.items():
        if type(size) is not int or size <= 0:
            raise ContextSizesError(f"{where}: the context size of {name!r} must be a positive integer")
        out[name.lower()] = size
    return out


@functools.lru_cache(maxsize=4)
def table(override: str | None = None) -> dict[str, int]:
    return read_table(SHIPPED, ENV, override, _rows, ContextSizesError)


def check_env() -> None:
    """At start-up: a bad override file stops the hub with one line."""
    table(os.environ.get(ENV) or None)


def context_limit(model: str | None) -> int | None:
    """The model's context window in tokens, or None when the table does not know it."""
    return lookup(table, ENV, ContextSizesError, model) if model else None
