"""`search_runs` and `diff_runs`: finding runs by words and filters, and two runs compared
compactly (compare/runs.py's result: the first differing node and what differs)."""

from __future__ import annotations

import re
import sqlite3
import time
from typing import Any

from ..compare.runs import CompareError, compare
from ..store import reads as store_reads
from ..store.status import RUN_STATUSES
from .explain import PAGE, PREVIEW, preview
from .reads import DEFAULT_BUDGET, Links, ToolInputError, _fit, clean

_FILTER = re.compile(r"^(app|status|tool|model|kind|agent|since|name)=(.+)$")
_SINCE = re.compile(r"^(\d+)([smhd])$")


def parse_query(query: str) -> tuple[dict[str, str], list[str], set[str]]:
    """`app=refund status=error since=7d words…` → (filters, words, flags: error, held)."""
    filters: dict[str, str] = {}
    words: list[str] = []
    flags: set[str] = set()
    for word in query.split():
        m = _FILTER.match(word)
        if m:
            filters[m.group(1)] = m.group(2)
        elif word in ("error", "held") and word not in flags and not words:
            flags.add(word)
        else:
            words.append(word)
    return filters, words, flags


def since_ms(text: str) -> float:
    m = _SINCE.match(text)
    if not m:
        raise ToolInputError(f"since must be a number and s, m, h or d (7d, 12h; got {text!r})")
    seconds = int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    return (time.time() - seconds) * 1000


def search_runs(conn: sqlite3.Connection, links: Links, query: str, limit: int) -> str:
    if not 1 <= limit <= 100:
        raise ToolInputError(f"limit must be from 1 to 100 (got {limit})")
    filters, words, flags = parse_query(query)
    status = filters.get("status")
    if status is not None and status not in RUN_STATUSES:
        raise ToolInputError(f"status must be one of {', '.join(RUN_STATUSES)} (got {status!r})")
    f = store_reads.RunFilter(
        q=" ".join(words) or None,
        error="error" in flags,
        held="held" in flags,
        kind=filters.get("kind"),
        tool=filters.get("tool"),
        model=filters.get("model"),
        agent=filters.get("agent"),
        since=since_ms(filters["since"]) if "since" in filters else None,
    )
    runs = store_reads.list_runs(conn, 500 if "name" in filters else limit, status, filters.get("app"), f)
    if "name" in filters:
        runs = [r for r in runs if filters["name"].lower() in str(r["name"]).lower()][:limit]
    items = [
        {
            k: r.get(k)
            for k in ("id", "name", "app", "status", "startedAt", "endedAt", "nodeCount", "eventCount")
        }
        | {"link": links.run(r["id"])}
        for r in runs
    ]
    return _fit(clean({"query": query, "runs": items}), "runs", DEFAULT_BUDGET)


def diff_runs(conn: sqlite3.Connection, links: Links, a: str, b: str) -> str:
    try:
        result = compare(conn, a, b)
    except CompareError as exc:
        raise ToolInputError(str(exc)) from None
    rows = result["steps"]
    first = next((r for r in rows if r["status"] != "equal"), None)
    seen: dict[str, int] = {}
    numbered: list[tuple[str, dict[str, Any]]] = []
    for r in rows:
        seen[r["nodeId"]] = seen.get(r["nodeId"], 0) + 1
        numbered.append((f"{r['nodeId']}#{seen[r['nodeId']]}", r))
    answer: dict[str, Any] = {
        "a": {"id": a, "status": result["a"]["status"], "link": links.run(a)},
        "b": {"id": b, "status": result["b"]["status"], "link": links.run(b)},
        "same": result["same"],
        "counts": result["counts"],
        "deltas": result["deltas"],
        "firstDifference": _difference(first) if first else None,
        "differing": [
            {"step": label, "status": r["status"], "changed": r["changed"]}
            for label, r in numbered
            if r["status"] != "equal"
        ][:PAGE],
        "effects": {"same": result["effects"].get("same")},
    }
    return _fit(clean(answer), "differing", DEFAULT_BUDGET)


def _difference(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"nodeId": row["nodeId"], "status": row["status"], "changed": row["changed"]}
    for field in row["changed"] or ("input", "output"):
        out[field] = {side: preview(row[side].get(field), PREVIEW // 4) for side in ("a", "b") if side in row}
    if row["status"] in ("added", "removed"):
        side = "b" if row["status"] == "added" else "a"
        out["input"] = preview(row[side].get("input"), PREVIEW // 4)
    return out
