"""Tokens and cost of a run, folded from its model nodes' `usage` (pure: no SQL, no I/O).

A run keeps, per model, the tokens its nodes reported and the cost the framework reported
(LiteLLM's `response_cost`, sent as `usage.costUsd`). The cost of tokens with no reported cost is
computed when the run is read, from the price table (store/prices.py): so a new or overridden table
prices every stored run, and a reported cost is never replaced by an estimate.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

UNKNOWN_MODEL = "unknown"
# The wire's names (docs/protocol.md `usage`): OpenAI-style counts; Anthropic's cache reads.
_CACHED_KEYS = ("cacheReadTokens", "cachedTokens")


def _count(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def _cost(value: Any) -> float | None:
    if type(value) in (int, float) and value == value and value >= 0 and value != float("inf"):
        return float(value)
    return None


def load(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _name(holder: Any) -> str | None:
    model = holder.get("model") if isinstance(holder, dict) else None
    return model if isinstance(model, str) and model else None


def started_model(event: dict[str, Any]) -> str | None:
    """The model a `node.started` names (docs/protocol.md, "The model of a model step"): its
    `attrs.model`, where every adapter puts it; else, for a model step (`kind: "llm"`: a function
    wrapped by hand, a client older than the rule), its `input.model`."""
    found = _name(event.get("attrs"))
    if found is None and event.get("kind") == "llm":
        found = _name(event.get("input"))
    return found


def answered_model(event: dict[str, Any]) -> str | None:
    """The last place a model is read from: the `output.model` of a `node.finished` (the model that
    answered, which OpenAI's and LiteLLM's replies name), for a node whose start named none."""
    return _name(event.get("output"))


def add(usage: dict[str, Any], model: str | None, reported: Any) -> bool:
    """Fold one node's `usage` into the run's {"models": {model: counts}}; True if it changed."""
    if not isinstance(reported, dict):
        return False
    inp, out = _count(reported.get("inputTokens")), _count(reported.get("outputTokens"))
    cached = next((_count(reported.get(k)) for k in _CACHED_KEYS if _count(reported.get(k))), 0)
    cost = _cost(reported.get("costUsd"))
    if not (inp or out or cached or cost is not None):
        return False
    models = usage.setdefault("models", {})
    row = models.setdefault(
        model or UNKNOWN_MODEL,
        {
            "inputTokens": 0,
            "outputTokens": 0,
            "cachedTokens": 0,
            "calls": 0,
            "costUsd": 0.0,
            "unpricedIn": 0,
            "unpricedOut": 0,
            "unpricedCached": 0,
        },
    )
    row["inputTokens"] += inp
    row["outputTokens"] += out
    row["cachedTokens"] += cached
    row["calls"] += 1
    if cost is not None:
        row["costUsd"] += cost
    else:  # priced from the table when read
        row["unpricedIn"] += inp
        row["unpricedOut"] += out
        row["unpricedCached"] += cached
    return True


def to_api(usage: dict[str, Any], price: Any) -> dict[str, Any]:
    """The Run's `usage`: totals, cost (reported + table), where the cost came from, per model.
    `price(model)`: (usd per 1M input, per 1M output, per 1M cached input) or None."""
    total_in = total_out = total_cached = 0
    reported = estimated = 0.0
    has_reported = has_estimate = unpriced = False
    models_out: dict[str, Any] = {}
    for model, row in (usage.get("models") or {}).items():
        if not isinstance(row, dict):
            continue
        total_in += _count(row.get("inputTokens"))
        total_out += _count(row.get("outputTokens"))
        total_cached += _count(row.get("cachedTokens"))
        cost = float(row.get("costUsd") or 0.0)
        if cost:
            has_reported = True
        reported += cost
        left_in, left_out = _count(row.get("unpricedIn")), _count(row.get("unpricedOut"))
        left_cached = min(_count(row.get("unpricedCached")), left_in)
        model_cost: float | None = cost if cost else None
        if left_in or left_out:
            p = price(model)
            if p is None:
                unpriced = True
            else:
                per_in, per_out, per_cached = p
                extra = (
                    (left_in - left_cached) * per_in + left_cached * per_cached + left_out * per_out
                ) / 1e6
                estimated += extra
                has_estimate = True
                model_cost = (model_cost or 0.0) + extra
        models_out[model] = {
            "inputTokens": _count(row.get("inputTokens")),
            "outputTokens": _count(row.get("outputTokens")),
            "cachedTokens": _count(row.get("cachedTokens")),
            "calls": _count(row.get("calls")),
            "costUsd": None if model_cost is None else round(model_cost, 8),
        }
    source = (
        "reported + price table"
        if has_reported and has_estimate
        else "reported"
        if has_reported
        else "price table"
        if has_estimate
        else None
    )
    cost_total = reported + estimated if source else None
    return {
        "inputTokens": total_in,
        "outputTokens": total_out,
        "cachedTokens": total_cached,
        "totalTokens": total_in + total_out,
        "costUsd": None if cost_total is None else round(cost_total, 8),
        "costSource": source,
        "unpricedModels": unpriced,
        "models": models_out,
    }


def backfill(conn: sqlite3.Connection) -> None:
    """Migration 4: the usage of runs stored before it, folded from their model nodes' events."""
    runs: dict[str, dict[str, Any]] = {}
    held: dict[str, float] = {}
    models: dict[tuple[str, str], str] = {}
    text = "CASE WHEN json_type(body, '{0}') = 'text' THEN json_extract(body, '{0}') END"  # a name, not an object
    rows = conn.execute(
        "SELECT run_id, type, json_extract(body, '$.instanceId'), json_extract(body, '$.kind'),"
        f" {text.format('$.attrs.model')}, {text.format('$.input.model')}, {text.format('$.output.model')},"
        " json_extract(body, '$.usage'), json_extract(body, '$.heldMs')"
        " FROM events WHERE type IN ('node.started', 'node.finished', 'exec.resumed') AND json_valid(body)"
        " ORDER BY cursor"
    )
    for run_id, etype, instance, kind, attrs_model, input_model, output_model, reported, held_ms in rows:
        if etype == "node.started":
            # the same rule as a live event's (started_model), read from the stored columns
            model = started_model(
                {"kind": kind, "attrs": {"model": attrs_model}, "input": {"model": input_model}}
            )
            if model is not None:
                models[(run_id, instance)] = model
        elif etype == "exec.resumed":
            if type(held_ms) in (int, float) and held_ms > 0:
                held[run_id] = held.get(run_id, 0.0) + held_ms
        elif reported:
            model = models.pop((run_id, instance), None) or answered_model(
                {"output": {"model": output_model}}
            )
            add(runs.setdefault(run_id, {}), model, load(reported))
    for run_id, value in runs.items():
        conn.execute("UPDATE runs SET usage = ? WHERE id = ?", (json.dumps(value), run_id))
    for run_id, ms in held.items():
        conn.execute("UPDATE runs SET held_ms = ? WHERE id = ?", (ms, run_id))
