"""One stored execution's events, found by index: for the playground (playground/) its
`node.started` (the request as the adapter described it) and its end (`node.finished` /
`node.error`); for the context X-ray (store/context.py) a model node's starts in order.

A run's events hold an execution's ids only in their JSON bodies; the two expression indexes of
MIGRATION make "the events of this execution" and "this node's starts" index lookups instead of
a scan of the run (seconds on a run of a million events). The expressions are guarded by
`json_valid`: an unreadable body must never fail the writer's insert, and a query uses an index
only when it names the very same expression and the index's WHERE (so the SQL below is shared).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

# An execution's events (its start, its end, a retried start) carry these three types.
NODE_TYPES = "type IN ('node.started', 'node.finished', 'node.error')"
INSTANCE = "(CASE WHEN json_valid(body) THEN json_extract(body, '$.instanceId') END)"
NODE = "(CASE WHEN json_valid(body) THEN json_extract(body, '$.nodeId') END)"
STARTS = "type = 'node.started'"

# Migration (store/schema.py): SQLite fills both from the stored events (a pass over the node
# events: ~8 s a million on this machine) and keeps them as events are written and deleted.
MIGRATION = [
    f"CREATE INDEX IF NOT EXISTS events_by_instance ON events (run_id, {INSTANCE}) WHERE {NODE_TYPES}",
    f"CREATE INDEX IF NOT EXISTS events_by_node_start ON events (run_id, {NODE}) WHERE {STARTS}",
]

# The events of one execution id in a run (any node), in the order stored.
BY_INSTANCE = (
    f"SELECT cursor, seq, type, body FROM events WHERE run_id = ? AND {NODE_TYPES} AND {INSTANCE} = ?"
    " ORDER BY cursor"
)


def instance_events(
    conn: sqlite3.Connection, run_id: str, instance_id: str
) -> list[tuple[int, int, str, str]]:
    """(cursor, seq, type, body) of every start and end stored for `instance_id` in the run."""
    return conn.execute(BY_INSTANCE, (run_id, instance_id)).fetchall()


def execution(conn: sqlite3.Connection, run_id: str, instance_id: str) -> dict[str, Any] | None:
    """{"started": event, "ended": event | None} of one execution of a run, None when not stored."""
    found: dict[str, Any] = {"started": None, "ended": None}
    for _, _, etype, body in instance_events(conn, run_id, instance_id):
        event = json.loads(body)
        if etype == "node.started":
            found["started"], found["ended"] = event, None  # a retried execution: its latest start
        else:
            found["ended"] = event
    return found if found["started"] is not None else None
