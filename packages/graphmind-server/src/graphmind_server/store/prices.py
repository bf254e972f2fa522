"""The price table the hub prices tokens with when the framework reported no cost (docs/api.md
"Tokens and cost"). The shipped table (prices.json) names its source and date; a user's own file
(GRAPHMIND_PRICES=path, same shape) is merged over it, model by model.

A model matches a row by the longest row name it starts with, after any `provider/` prefix
(`openai/gpt-4o-2024-08-06` → `gpt-4o`), so dated snapshots share their family's price.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from ..base.modeltable import lookup, read_table

SHIPPED = Path(__file__).with_name("prices.json")
ENV = "GRAPHMIND_PRICES"


class PriceTableError(ValueError):
    """The override file cannot be used; str() is the one line to print."""


def _rows(doc: Any, where: str) -> dict[str, tuple[float, float, float]]:
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, dict):
        raise PriceTableError(f'{where} must be a JSON object with "models": {{name: {{"input", "output"}}}}')
    out: dict[str, tuple[float, float, float]] = {}
    for name, row in models.items():
        ok = isinstance(row, dict) and all(
            type(row.get(k)) in (int, float) and row[k] >= 0 for k in ("input", "output")
        )
        if not ok:
            raise PriceTableError(
                f'{where}: the price of {name!r} must be {{"input": usd, "output": usd}} per 1M tokens'
            )
        cached = row.get("cachedInput", row["input"])
        out[name.lower()] = (float(row["input"]), float(row["output"]), float(cached))
    return out


@functools.lru_cache(maxsize=4)
def table(override: str | None = None) -> dict[str, tuple[float, float, float]]:
    return read_table(SHIPPED, ENV, override, _rows, PriceTableError)


def current() -> str | None:
    return os.environ.get(ENV) or None


def check_env() -> None:
    """At start-up: a bad override file stops the hub with one line, not the first priced read."""
    table(current())


def price(model: str) -> tuple[float, float, float] | None:
    """(input, output, cached input) USD per 1M tokens for a model name, or None when unknown."""
    return lookup(table, ENV, PriceTableError, model)


def source() -> dict[str, Any]:
    doc = json.loads(SHIPPED.read_text(encoding="utf-8"))
    return {"source": doc["source"], "date": doc["date"], "override": os.environ.get(ENV) or None}
