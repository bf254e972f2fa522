"""One stored execution's events, for the playground (playground/): its `node.started` (the request
as the adapter described it) and its end (`node.finished` / `node.error`)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any


def execution(conn: sqlite3.Connection, run_id: str, instance_id: str) -> dict[str, Any] | None:
    """{"started": event, "ended": event | None} of one execution of a run, None when not stored."""
    found: dict[str, Any] = {"started": None, "ended": None}
    for etype, body in conn.execute(
        "SELECT type, body FROM events WHERE run_id = ? AND type IN ('node.started', 'node.finished', 'node.error')"
        " AND json_valid(body) AND json_extract(body, '$.instanceId') = ? ORDER BY cursor",
        (run_id, instance_id),
    ):
        event = json.loads(body)
        if etype == "node.started":
            found["started"], found["ended"] = event, None  # a retried execution: its latest start
        else:
            found["ended"] = event
    return found if found["started"] is not None else None
