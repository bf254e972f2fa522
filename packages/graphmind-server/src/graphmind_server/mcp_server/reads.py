"""What the MCP tools answer, as plain functions over a read-only connection (no SDK needed).

Every answer is one JSON text of at most `budget` characters. Values under secret-looking keys
are removed (graphmind.redaction), and values the app redacted stay "__REDACTED__".
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any
from urllib.parse import quote

from graphmind.redaction import strip_secret_keys

from ..export.jsonl import encode
from ..store import reads
from ..store.status import RUN_STATUSES

DEFAULT_BUDGET = 40_000
MIN_BUDGET = 2_000
MAX_BUDGET = 400_000
_RESERVE = 600  # room for the envelope around a page of events


class ToolInputError(ValueError):
    """A tool argument out of range; the message says which and what to pass."""


class Links:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}/"

    def run(self, run_id: str) -> str:
        return f"{self.base}#/run/{quote(run_id, safe='')}"

    def node(self, run_id: str, node_id: str) -> str:
        return f"{self.run(run_id)}/node/{quote(node_id, safe='')}"


def check_budget(budget: int) -> int:
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise ToolInputError(f"budget must be from {MIN_BUDGET} to {MAX_BUDGET} characters (got {budget})")
    return budget


def clean(value: Any) -> Any:
    return strip_secret_keys(value)[0]


def list_runs(
    conn: sqlite3.Connection,
    links: Links,
    *,
    status: str | None,
    app: str | None,
    name_contains: str | None,
    limit: int,
) -> str:
    if status is not None and status not in RUN_STATUSES:
        raise ToolInputError(f"status must be one of {', '.join(RUN_STATUSES)} (got {status!r})")
    if not 1 <= limit <= 200:
        raise ToolInputError(f"limit must be from 1 to 200 (got {limit})")
    runs = reads.list_runs(conn, 1000 if name_contains else limit, status, app)
    if name_contains:
        runs = [r for r in runs if name_contains.lower() in str(r["name"]).lower()][:limit]
    items = [{**clean(r), "link": links.run(r["id"])} for r in runs]
    return _fit({"runs": items, "viewer": links.base}, "runs", DEFAULT_BUDGET)


def get_run(conn: sqlite3.Connection, links: Links, run_id: str) -> str:
    run = reads.get_run(conn, run_id)
    if run is None:
        raise ToolInputError(f"no run {run_id!r}; list_runs shows the recorded runs")
    for node in run["nodes"]:
        node["link"] = links.node(run_id, node["nodeId"])
    # Edges of the graph: which node's execution started which (node.started's parentInstanceId).
    owner: dict[str, str] = {run_id: run["nodes"][0]["nodeId"]} if run["nodes"] else {}
    edges: dict[tuple[str, str], int] = {}
    for body in reads.started_events(conn, run_id):
        ev = json.loads(body)
        instance, node_id, parent = ev.get("instanceId"), ev.get("nodeId"), ev.get("parentInstanceId")
        if isinstance(instance, str) and isinstance(node_id, str):
            owner[instance] = node_id
            source = owner.get(parent) if isinstance(parent, str) else None
            if source is not None and ev.get("type") == "node.started":
                edges[(source, node_id)] = edges.get((source, node_id), 0) + 1
    run["edges"] = [{"from": a, "to": b, "count": n} for (a, b), n in edges.items()]
    run["link"] = links.run(run_id)
    return _fit(clean(run), "nodes", DEFAULT_BUDGET)


def get_events(
    conn: sqlite3.Connection,
    links: Links,
    run_id: str,
    *,
    after: int,
    limit: int,
    budget: int,
    types: list[str] | None,
) -> str:
    check_budget(budget)
    if not 1 <= limit <= 5000:
        raise ToolInputError(f"limit must be from 1 to 5000 (got {limit})")
    if after < 0:
        raise ToolInputError(f"after must be a seq >= 0 (got {after})")
    if reads.run_owner(conn, run_id) is None:
        raise ToolInputError(f"no run {run_id!r}; list_runs shows the recorded runs")
    # Rows are read lazily: a page stops at its budget, usually long before `limit`.
    rows = reads.events_by_seq(conn, run_id, after, types, limit + 1)
    events: list[tuple[int, str, bool]] = []  # (seq, JSON, cut to fit)
    used = _RESERVE + 3 * len(run_id) + len(links.base)
    more = False
    for seq, body in rows:
        if len(events) == limit:
            more = True
            break
        text = encode(clean(json.loads(body)))
        cut = len(text) > budget // 2
        if cut:
            text = encode(shrink(json.loads(text), budget // 4))
        if used + len(text) + 1 > budget and events:
            more = True
            break
        events.append((seq, text, cut))
        used += len(text) + 1
    rows.close()
    while True:
        head = encode(
            {
                "runId": run_id,
                "link": links.run(run_id),
                "count": len(events),
                "next": events[-1][0] if more and events else None,
                "truncatedEvents": sum(1 for e in events if e[2]),
            }
        )
        answer = head[:-1] + ',"events":[' + ",".join(e[1] for e in events) + "]}"
        if len(answer) <= budget or len(events) <= 1:
            return answer
        events.pop()
        more = True


def shrink(value: Any, limit: int) -> Any:
    """The event with long strings cut (marked) until its JSON fits in `limit` characters."""
    cut = max(limit // 4, 64)
    while True:
        value = _cut_strings(value, cut)
        if len(encode(value)) <= limit or cut <= 16:
            if isinstance(value, dict):
                value["_truncated"] = True
            if len(encode(value)) <= limit:
                return value
            keep = ("type", "seq", "ts", "runId", "nodeId", "instanceId", "kind", "name", "gate")
            return {k: value[k] for k in keep if isinstance(value, dict) and k in value} | {
                "_truncated": True
            }
        cut //= 2


def _cut_strings(value: Any, cut: int) -> Any:
    if isinstance(value, str) and len(value) > cut:
        return value[:cut] + f"… [{len(value) - cut} more characters]"
    if isinstance(value, dict):
        return {k: _cut_strings(v, cut) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_strings(v, cut) for v in value]
    return value


def search_events(
    conn: sqlite3.Connection, links: Links, text: str, *, run_id: str | None, limit: int, budget: int
) -> str:
    check_budget(budget)
    if not text.strip():
        raise ToolInputError("text must not be empty")
    if not 1 <= limit <= 200:
        raise ToolInputError(f"limit must be from 1 to 200 (got {limit})")
    rows = reads.events_containing(conn, text, run_id, limit * 4)
    hits: list[dict[str, Any]] = []
    needle = text.lower()
    for rid, seq, body in rows:
        ev = clean(json.loads(body))
        flat = encode(ev)
        at = flat.lower().find(needle)
        if at < 0:  # the match was inside a removed secret value, or only in escaped text
            continue
        hit = {
            "runId": rid,
            "seq": seq,
            "type": ev.get("type"),
            "nodeId": ev.get("nodeId"),
            "snippet": flat[max(0, at - 120) : at + len(text) + 120],
            "link": links.node(rid, ev["nodeId"]) if isinstance(ev.get("nodeId"), str) else links.run(rid),
        }
        hits.append(hit)
        if len(hits) >= limit:
            break
    return _fit({"matches": hits, "query": text}, "matches", budget)


def held_gates_from_db(conn: sqlite3.Connection, links: Links) -> list[dict[str, Any]]:
    """Gates held now in running runs, as the store keeps them (when no hub answers)."""
    return [
        {
            "gateId": None,
            "appGateId": ev.get("gateId"),
            "runId": rid,
            "nodeId": ev.get("nodeId"),
            "gate": ev.get("gate"),
            "reason": ev.get("reason"),
            "actions": ev.get("actions"),
            "heldSince": ev.get("ts"),
            "link": links.run(rid),
        }
        for rid, ev in reads.held_gates(conn)
    ]


def _fit(answer: dict[str, Any], list_key: str, budget: int) -> str:
    """The answer's JSON, dropping items from the end of its list until it fits the budget."""
    text = encode(answer)
    items = answer.get(list_key)
    while len(text) > budget and isinstance(items, list) and items:
        items.pop()
        answer["truncated"] = True
        text = encode(answer)
    if len(text) > budget:
        text = encode(shrink(answer, budget))
    return text


def get_context(
    conn: sqlite3.Connection, links: Links, run_id: str, node_id: str, instance: str | None, budget: int
) -> str:
    """A model step's context breakdown (docs/context.md), as `GET .../context` answers it; over the
    budget, the smallest parts are left out first (`partsOmitted` counts them; the total stays)."""
    from ..context.report import ContextError, node_context

    check_budget(budget)
    try:
        answer = node_context(conn, run_id, node_id, instance)
    except ContextError as exc:
        raise ToolInputError(f"{exc}; get_run lists a run's nodes") from None
    answer["held"] = any(
        ev.get("nodeId") == node_id
        and ev.get("instanceId") == answer["instanceId"]
        and ev.get("gate") == "before"
        for rid, ev in reads.held_gates(conn)
        if rid == run_id
    )
    answer["link"] = links.node(run_id, node_id)
    answer = clean(answer)
    text = encode(answer)
    parts: list[dict[str, Any]] = answer["parts"]
    omitted = 0
    while len(text) > budget and parts:
        parts.remove(min(parts, key=lambda p: p["tokens"]))
        omitted += 1
        answer["partsOmitted"] = omitted
        text = encode(answer)
    return text if len(text) <= budget else encode(shrink(answer, budget))
