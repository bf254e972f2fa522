"""The output an earlier stored run recorded for the same call (docs/effects.md, "Simulated values"):
what the hub sends with a `simulate` answer that carries no value of its own, so a write held in
one process can be simulated with what the same tool returned, for the same input, in another.

Only a real output counts: one the body produced (not simulated, injected or replayed, and not an
error). The search is bounded (the newest runs that have the node, and a cap on the events read),
since it runs while a person waits for the answer to go out.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from graphmind import protocol as proto

RUNS = 20  # the newest runs that have this node
MAX_EVENTS = 20_000  # node events read in all


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _contains_redacted(value: Any) -> bool:
    return proto.REDACTED in _canon(value)


def recorded_output(conn: sqlite3.Connection, node_id: str, input: Any, skip_run: str) -> tuple[bool, Any]:
    """(found, output) of the newest earlier call of `node_id` with an equal input (keys in any
    order), outside `skip_run` (the run being answered). An input with a hidden value never matches."""
    if _contains_redacted(input):
        return False, None
    want = _canon(input)
    runs = conn.execute(
        "SELECT n.run_id FROM nodes n JOIN runs r ON r.id = n.run_id WHERE n.node_id = ? AND n.run_id != ?"
        " ORDER BY r.received_at DESC LIMIT ?",
        (node_id, skip_run, RUNS),
    ).fetchall()
    budget = MAX_EVENTS
    for (run_id,) in runs:
        rows = conn.execute(
            "SELECT body FROM events WHERE run_id = ? AND type IN ('node.started', 'node.finished')"
            " ORDER BY cursor DESC LIMIT ?",
            (run_id, budget),
        ).fetchall()
        budget -= len(rows)
        found = _in_run([r[0] for r in rows], node_id, want)
        if found[0] or budget <= 0:
            return found
    return False, None


def _in_run(bodies: list[str], node_id: str, want: str) -> tuple[bool, Any]:
    """Newest first: the endings of this node seen so far by instance, then a start that matches."""
    endings: dict[Any, dict[str, Any]] = {}
    quoted = json.dumps(node_id)
    for body in bodies:
        if quoted not in body:  # cheap: most events are of other nodes
            continue
        try:
            ev = json.loads(body)
        except ValueError:
            continue
        if not isinstance(ev, dict) or ev.get("nodeId") != node_id:
            continue
        if ev.get("type") == "node.finished":
            endings.setdefault(ev.get("instanceId"), ev)
            continue
        end = endings.get(ev.get("instanceId"))
        if end is None or _canon(ev.get("input")) != want:
            continue
        if any(end.get(flag) is True for flag in ("simulated", "injected", "replayed", "edited")):
            continue
        output = end.get("output")
        if not _contains_redacted(output):
            return True, output
    return False, None
