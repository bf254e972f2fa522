"""Proposed answers at a held gate (docs/api.md, "Proposals"): a coding assistant (through
`graphmind mcp`) proposes, the person accepts or rejects it on the gate's card.

An accepted proposal is sent through the one gate-answer path (`api.answer`, the very checks and
confirmation of `POST /api/gates/{gateId}`), through the door of whoever accepted it; `apply: true`
(`graphmind mcp --allow-control=auto`) accepts it at once, as `auto`. Every proposal and its fate
is kept with the run (store/proposals.py).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from graphmind import protocol as proto

from ..base.jsontext import JSON
from ..effects.answer import door_of
from ..hub.connections import Gate
from ..hub.gate_edit import contains_redacted
from ..store.proposals import STATUSES, AddProposal, DecideProposal, query
from . import api
from .request import BadRequest, error, json_body
from .request import hub_of as _hub
from .request import int_param as _int_param

KINDS = ("inject", "edit", "retry", "continue")
MAX_WHY = 2000
BODY_SHAPE = (
    'the body must be {"gateId": "...", "action": "inject" | "edit" | "retry" | "continue", '
    '"value"?: ..., "why": "...", "apply"?: true}'
)


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def answer_body(gate: Gate, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """The `POST /api/gates/{gateId}` body a proposal stands for. `edit` is the edited input: the
    call runs with it (a before gate's continue) or runs again with it (an after or error gate's
    retry), as the card's Edit input / Retry with… do."""
    if kind in ("inject", "edit") and "value" not in body:
        what = "the JSON the call returns instead" if kind == "inject" else "the edited input (JSON)"
        raise Refused(400, f"{kind} needs a value: {what}")
    if "value" in body and contains_redacted(body["value"]):
        raise Refused(
            422, f"the proposed value still contains {proto.REDACTED!r} (a hidden value); use real data"
        )
    if kind == "inject":
        out: dict[str, Any] = {"action": proto.INJECT, "value": body["value"]}
    elif kind == "edit":
        if gate.event.get("editable") is not True:
            why = gate.to_api()["notEditable"]
            raise Refused(422, f"this call's input cannot be edited: {why}")
        out = {"action": proto.CONTINUE if gate.event.get("gate") == proto.BEFORE else proto.RETRY}
        out["input"] = body["value"]
    else:
        out = {"action": kind}
    if out["action"] not in gate.actions:
        raise Refused(
            422,
            f"a {gate.event.get('gate')} gate does not take {kind!r}; it takes {', '.join(gate.actions)}",
        )
    return out


def _broadcast(hub: Any, gate: Gate) -> None:
    hub.broadcast({"type": "gate.proposals", "gateId": gate.hub_id, "proposals": list(gate.proposals)})


async def propose(request: Request) -> Response:
    hub = _hub(request)
    try:
        body = await json_body(request)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("gateId"), str)
        or body.get("action") not in KINDS
    ):
        return error(400, BODY_SHAPE)
    why = body.get("why")
    if not isinstance(why, str) or not why.strip():
        return error(400, '"why" must say, in a sentence, why this answer (the person reads it on the card)')
    if len(why) > MAX_WHY:
        return error(400, f'"why" is {len(why)} characters; keep it under {MAX_WHY}')
    apply = body.get("apply", False)
    if not isinstance(apply, bool):
        return error(400, '"apply" must be true or false')
    gate = hub.gates.get(body["gateId"])
    if gate is None:
        return error(404, f"gate {body['gateId']!r} is not held (already answered, or its app is gone)")
    try:
        answer = answer_body(gate, body["action"], body)
    except Refused as exc:
        return error(exc.status, str(exc))
    ev = gate.event
    proposal: dict[str, Any] = {
        "id": f"p-{secrets.token_hex(6)}",
        "runId": gate.run_id,
        "nodeId": ev.get("nodeId"),
        "instanceId": ev.get("instanceId"),
        "gateId": gate.hub_id,
        "gate": ev.get("gate"),
        "action": body["action"],
        "answer": answer,
        "why": why.strip(),
        "status": "pending",
        "decidedBy": None,
        "createdAt": time.time() * 1000,
        "decidedAt": None,
    }
    await hub.store.submit(AddProposal(proposal))
    if apply:
        return await _decide(hub, gate, proposal, "auto", accept=True, via="mcp")
    gate.proposals.append(proposal)
    _broadcast(hub, gate)
    return JSON({"ok": True, "proposal": proposal, "applied": False})


def _find(hub: Any, proposal_id: str) -> tuple[Gate, dict[str, Any]] | None:
    for gate in hub.gates.values():
        for p in gate.proposals:
            if p["id"] == proposal_id:
                return gate, p
    return None


async def decide(request: Request) -> Response:
    hub = _hub(request)
    proposal_id, verb = request.path_params["proposal_id"], request.path_params["verb"]
    if verb not in ("accept", "reject"):
        return error(404, f"no such API route: POST {request.url.path} (accept or reject; see docs/api.md)")
    try:
        body = await json_body(request)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    note = body.get("note") if isinstance(body, dict) else None
    found = _find(hub, proposal_id)
    if found is None:
        return error(404, f"proposal {proposal_id!r} is not pending (decided already, or its gate is gone)")
    gate, proposal = found
    door = door_of(request)
    return await _decide(
        hub,
        gate,
        proposal,
        door,
        accept=verb == "accept",
        via=door,
        note=note if isinstance(note, str) else None,
    )


async def _decide(
    hub: Any,
    gate: Gate,
    proposal: dict[str, Any],
    by: str,
    *,
    accept: bool,
    via: str,
    note: str | None = None,
) -> Response:
    """Accept (send its answer through the gate-answer path, then record who accepted it) or
    reject (record it; the gate stays held)."""
    if proposal in gate.proposals:
        gate.proposals.remove(proposal)  # not lapsed by the release its own answer causes
    now = time.time() * 1000
    if not accept:
        await hub.store.submit(DecideProposal(proposal["id"], "rejected", by, now, note))
        _broadcast(hub, gate)
        return JSON(
            {"ok": True, "proposal": {**proposal, "status": "rejected", "decidedBy": by, "decidedAt": now}}
        )
    response = await api.answer(hub, gate.hub_id, proposal["answer"], via)
    if response.status_code != 200:
        if hub.gates.get(gate.hub_id) is gate and by != "auto":
            gate.proposals.append(proposal)  # still held: the person may decide again
        else:
            await hub.store.submit(DecideProposal(proposal["id"], "lapsed", by, now, _error_of(response)))
        return response
    await hub.store.submit(DecideProposal(proposal["id"], "accepted", by, now, note))
    if hub.gates.get(gate.hub_id) is gate:
        _broadcast(hub, gate)
    decided = {**proposal, "status": "accepted", "decidedBy": by, "decidedAt": now}
    return JSON({"ok": True, "proposal": decided, "applied": True})


def _error_of(response: Response) -> str:
    try:
        return str(json.loads(bytes(response.body))["error"])
    except (ValueError, KeyError, TypeError):
        return f"the hub answered {response.status_code}"


async def list_proposals(request: Request) -> Response:
    hub = _hub(request)
    status = request.query_params.get("status")
    if status is not None and status not in STATUSES:
        return error(400, f"status must be one of {', '.join(STATUSES)} (got {status!r})")
    try:
        limit = _int_param(request, "limit", 100, 1, 1000)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    await hub.store.barrier()
    found = await hub.store.read(query, request.query_params.get("runId"), status, limit)
    return JSON({"proposals": found})


routes = [
    Route("/api/proposals", list_proposals, methods=["GET"]),
    Route("/api/proposals", propose, methods=["POST"]),
    Route("/api/proposals/{proposal_id}/{verb}", decide, methods=["POST"]),
]
