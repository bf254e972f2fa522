"""Who answered a gate: the viewer, an API client or the MCP server (docs/api.md, "Who answered").

The app only knows that the hub answered (`exec.resumed` `by: "hub"`); the hub knows which of its
doors the answer came through. Each door says so in the `X-GraphMind-Via` header of its
`POST /api/gates/{gateId}` (the viewer `viewer`, `graphmind mcp` `mcp`; anything else is `api`).
The hub keeps it on the gate while the answer travels, and writes it into the `exec.resumed` the
app sends back (`answeredBy`) before storing it: so it stays with the run, in exports too, and the
effects ledger (store/effects.py) can say by whose answer a call ran.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from .connections import AppConnection

VIA_HEADER = "x-graphmind-via"
DOORS = ("viewer", "mcp", "api")
FIELD = "answeredBy"


def door_of(request: Request) -> str:
    """The door an answer came through: its `X-GraphMind-Via`, `api` when absent or unknown."""
    via = request.headers.get(VIA_HEADER, "").strip().lower()
    return via if via in DOORS else "api"


def stamp(conn: AppConnection, frame: dict[str, Any], raw: str) -> tuple[dict[str, Any], str]:
    """An `exec.resumed` answering a gate the hub answered: with `answeredBy` (frame and stored text).
    Anything else (a timeout, an abort in the app, a replay of an old resume) is left as sent."""
    if frame.get("by") != "hub" or FIELD in frame:
        return frame, raw
    app_id = frame.get("gateId")
    gate = conn.gates.get(app_id) if isinstance(app_id, str) else None
    door = gate.via if gate is not None else None
    if door is None:
        return frame, raw
    text = raw.rstrip()
    if not text.endswith("}") or len(frame) == 0:
        return frame, raw
    # The app's text stays byte for byte; the field is appended (frame has `type`: never empty).
    return {**frame, FIELD: door}, f"{text[:-1]},{json.dumps(FIELD)}:{json.dumps(door)}}}"
