"""An answer at an effect hold, before the hub sends it (docs/api.md, `POST /api/gates/{gateId}`;
docs/protocol.md, "Effects and safe mode"): the checks of a `simulate` answer (an optional `value`,
what the call returns instead of running, and `remember: true`, "simulate like this from now on":
the app keeps the value as that tool's stub for the rest of its process), the recorded output the
hub adds to one without a value, and who answered.

Who answered: the app only knows that the hub answered; the hub knows which of its doors the
answer came through. Each door says so in the `X-GraphMind-Via` header of its `POST
/api/gates/{gateId}` (the viewer `viewer`, `graphmind mcp` `mcp`; anything else is `api`). The hub
sends it in the `gate.resolve` (`answeredBy`), the app echoes it in its `exec.resumed` and in the
ending's `effect.by`: so it stays with the run, exports included, and the effects ledger
(store/effects.py) says by whose answer a call ran. It is a label, not a credential."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from graphmind import protocol as proto

from ..hub.gate_edit import EditRefused, contains_redacted
from ..store.recorded import recorded_output

VIA_HEADER = "x-graphmind-via"
DOORS = ("viewer", "mcp", "api")


def door_of(request: Request) -> str:
    """The door an answer came through: its `X-GraphMind-Via`, `api` when absent or unknown."""
    via = request.headers.get(VIA_HEADER, "").strip().lower()
    return via if via in DOORS else "api"


def simulate_fields(body: dict[str, Any]) -> dict[str, Any]:
    """The `gate.resolve` fields of a simulate answer beyond `value` (empty: none); EditRefused
    for a `remember` that is not a bool, comes without a value, or with another action."""
    remember = body.get("remember", False)
    if not isinstance(remember, bool):
        raise EditRefused(400, '"remember" must be true or false')
    if body["action"] != proto.SIMULATE:
        if remember:
            raise EditRefused(422, f'"remember" goes with simulate, not {body["action"]}')
        return {}
    if "value" in body and contains_redacted(body["value"]):
        raise EditRefused(
            422,
            f"the simulated value still contains {proto.REDACTED!r} (a hidden value); replace it with real data",
        )
    if remember and "value" not in body:
        raise EditRefused(400, '"remember": true needs the "value" to simulate with from now on')
    return {"remember": True} if remember else {}


def has_value(body: dict[str, Any]) -> bool:
    """Whether the answer sends a `value`: always with inject, when given with simulate."""
    return body["action"] == proto.INJECT or (body["action"] == proto.SIMULATE and "value" in body)


async def with_recorded_value(hub: Any, gate: Any, body: dict[str, Any]) -> dict[str, Any]:
    """A `simulate` without a value, at a call the app has no recorded output for: with the output
    an earlier stored run recorded for the same node and input, when the hub has one (the app then
    says `simulatedFrom: "hub"`). Otherwise the body as it came (the app builds its own value)."""
    event = gate.event
    if body["action"] != proto.SIMULATE or "value" in body or event.get("simulateWith") == "recorded":
        return body
    node_id = event.get("nodeId")
    if not isinstance(node_id, str) or "input" not in event:
        return body
    found, output = await hub.store.read(recorded_output, node_id, event["input"], gate.run_id)
    return {**body, "value": output} if found else body
