"""Who answered a gate: the viewer, an API client or the MCP server (docs/api.md, "Who answered").

The app only knows that the hub answered; the hub knows which of its doors the answer came
through. Each door says so in the `X-GraphMind-Via` header of its `POST /api/gates/{gateId}` (the
viewer `viewer`, `graphmind mcp` `mcp`; anything else is `api`). The hub sends it in the
`gate.resolve` (`answeredBy`), the app echoes it in its `exec.resumed` and in the ending's
`effect.by` (docs/protocol.md, "Effects and safe mode"): so it stays with the run, exports
included, and the effects ledger (store/effects.py) says by whose answer a call ran.
"""

from __future__ import annotations

from starlette.requests import Request

VIA_HEADER = "x-graphmind-via"
DOORS = ("viewer", "mcp", "api")


def door_of(request: Request) -> str:
    """The door an answer came through: its `X-GraphMind-Via`, `api` when absent or unknown."""
    via = request.headers.get(VIA_HEADER, "").strip().lower()
    return via if via in DOORS else "api"
