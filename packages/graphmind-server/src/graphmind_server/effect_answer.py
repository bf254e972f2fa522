"""The checks of a `simulate` answer before the hub sends it (docs/api.md, `POST /api/gates/{gateId}`;
docs/protocol.md, "Effects and safe mode"): an optional `value` (what the call returns instead of
running) and `remember: true` ("simulate like this from now on": the app keeps the value as that
tool's stub for the rest of its process)."""

from __future__ import annotations

from typing import Any

from graphmind import protocol as proto

from .gate_edit import EditRefused, contains_redacted
from .store.recorded import recorded_output


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
