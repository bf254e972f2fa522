"""A table keyed by model name that ships with the hub and that a user's file overrides: the price
table (store/prices.py) and the context sizes (context/limits.py) are read the same way.

The shipped JSON and the override file (named by an environment variable, same shape) are read
through the table's own row reader; the override is merged over the shipped rows, model by model.
A model matches the longest row name it starts with, after any `provider/` prefix, so dated
snapshots (`openai/gpt-4o-2024-08-06`) share their family's row (`gpt-4o`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def read_table(
    shipped: Path,
    env: str,
    override: str | None,
    rows: Callable[[Any, str], dict[str, T]],
    error: type[ValueError],
) -> dict[str, T]:
    """The shipped rows with the override file's merged over them; `error` (one line) when the
    override cannot be read or is not JSON; `rows` raises its own for a bad shape."""
    table = rows(json.loads(shipped.read_text(encoding="utf-8")), str(shipped))
    if override:
        path = Path(override).expanduser()
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise error(f"{env}={override}: cannot read it ({exc.strerror or exc})") from None
        except ValueError as exc:
            raise error(f"{env}={override}: not JSON ({exc})") from None
        table.update(rows(doc, f"{env}={override}"))
    return table


def lookup(
    table: Callable[[str | None], dict[str, T]], env: str, error: type[ValueError], model: str
) -> T | None:
    """The row of `model` (longest matching name), or None. An override file broken since the hub
    checked it at start reads the shipped table: a priced or measured read never fails on it."""
    try:
        rows = table(os.environ.get(env) or None)
    except error:
        rows = table(None)
    name = model.lower().rsplit("/", 1)[-1]
    best = None
    for key in rows:
        if name.startswith(key) and (best is None or len(key) > len(best)):
            best = key
    return rows[best] if best is not None else None
