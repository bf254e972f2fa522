"""The control API under /api/ (docs/api.md)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from graphmind import protocol as proto

from .._version import __version__
from ..base.jsontext import JSON
from ..effects.answer import door_of, has_value, simulate_fields, with_recorded_value
from ..hub.debugstate import DebugStateError
from ..hub.gate_edit import EditRefused, contains_redacted, edit_fields
from ..otlp.route import CLIENT_ID as OTLP_CLIENT
from ..store import reads
from ..store.ops import DeleteRun
from ..store.status import RUN_STATUSES
from .cockpit import index_now, run_filter
from .request import BadRequest, error, json_body, json_object
from .request import hub_of as _hub  # the short names this module's routes use
from .request import int_param as _int_param

ACTIONS = proto.ACTIONS
REDACTED = proto.REDACTED


async def health(request: Request) -> Response:
    body: dict[str, Any] = {"ok": True, "version": __version__, "protocol": 1}
    reason = _hub(request).store.not_storing_now  # a lost WAL too (store/wal_watch.py)
    body["storing"] = reason is None  # store/stall.py: false while a write keeps failing
    if reason is not None:
        body["notStoring"] = f"not storing: {reason}"
    forwarder = getattr(request.app.state, "otlp", None)
    if forwarder is not None:  # serve --otlp-endpoint: how the forwarding goes
        body["otlp"] = forwarder.stats()
    ingest = getattr(request.app.state, "otlp_ingest", None)
    if ingest is not None and ingest.counts["requests"]:  # POST /v1/traces: what came, what was refused
        body["otlpIngest"] = ingest.stats()
    return JSON(body)


async def otlp_traces(request: Request) -> Response:
    """POST /v1/traces (otlp/route.py)."""
    return await request.app.state.otlp_ingest(request)


async def list_runs(request: Request) -> Response:
    hub = _hub(request)
    try:
        limit = _int_param(request, "limit", 50, 1, 1000)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    status = request.query_params.get("status")
    if status is not None and status not in RUN_STATUSES:
        return error(400, f"status must be one of {', '.join(RUN_STATUSES)} (got {status!r})")
    try:
        filters = run_filter(request)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    await (index_now(hub) if filters.q is not None else hub.store.barrier())
    runs = await hub.store.read(reads.list_runs, limit, status, request.query_params.get("app"), filters)
    held = hub.held_counts()
    for run in runs:
        run["heldCount"] = held.get(run["id"], 0)
    return JSON({"runs": runs})


async def get_run(request: Request) -> Response:
    hub = _hub(request)
    run_id = request.path_params["run_id"]
    await hub.store.barrier()
    run = await hub.store.read(reads.get_run, run_id)
    if run is None:
        return error(404, f"no run {run_id!r} (deleted, pruned, or never reported)")
    run["heldCount"] = hub.held_counts().get(run_id, 0)
    return JSON(run)


def _events_page(conn: Any, run_id: str, after: int, limit: int) -> tuple[list[str], int | None] | None:
    if reads.run_owner(conn, run_id) is None:
        return None
    return reads.run_events(conn, run_id, after, limit)


async def run_events(request: Request) -> Response:
    hub = _hub(request)
    run_id = request.path_params["run_id"]
    try:
        after = _int_param(request, "after", 0, 0, 2**62)
        limit = _int_param(request, "limit", 1000, 1, 5000)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    await hub.store.barrier()
    page = await hub.store.read(_events_page, run_id, after, limit)
    if page is None:
        return error(404, f"no run {run_id!r} (deleted, pruned, or never reported)")
    bodies, next_seq = page
    # The events are spliced in as stored, byte for byte: never re-encoded.
    text = '{"events":[' + ",".join(bodies) + '],"next":' + json.dumps(next_seq) + "}"
    return Response(text, media_type="application/json")


async def delete_run(request: Request) -> Response:
    hub = _hub(request)
    run_id = request.path_params["run_id"]
    if not await hub.store.submit(DeleteRun(run_id)):
        return error(404, f"no run {run_id!r}")
    return JSON({"ok": True})


async def abort_run(request: Request) -> Response:
    hub = _hub(request)
    run_id = request.path_params["run_id"]
    await hub.store.barrier()
    owner = await hub.store.read(reads.run_owner, run_id)
    if owner is None:
        return error(404, f"no run {run_id!r}")
    status, client_id = owner
    if client_id == OTLP_CLIENT:
        return error(
            409,
            f"run {run_id!r} came in over OTLP: it is observe-only, so the hub cannot stop it "
            "(a GraphMind adapter in the app adds gates and aborts)",
        )
    if status != "running":
        return error(409, f"run {run_id!r} is {status}, not running: there is nothing to abort")
    if not await hub.abort(client_id, run_id):
        return error(409, f"the app of run {run_id!r} is not attached, so it cannot be aborted now")
    return JSON({"ok": True})


async def list_gates(request: Request) -> Response:
    return JSON({"gates": [g.to_api() for g in _hub(request).gates.values()]})


async def answer_gate(request: Request) -> Response:
    try:
        body = await json_body(request)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    return await answer(_hub(request), request.path_params["gate_id"], body, door_of(request))


async def answer(hub: Any, gate_id: str, body: Any, via: str) -> Response:
    """The one gate-answer path: `POST /api/gates/{gateId}`, and an accepted proposal
    (http/proposals.py) with the body it proposed. `via`: the door it came through."""
    if not isinstance(body, dict) or body.get("action") not in ACTIONS:
        return error(
            400,
            'the body must be {"action": '
            + " | ".join(f'"{a}"' for a in ACTIONS)
            + ', "value"?: ..., "input"?: ..., "reload"?: true, "remember"?: true}',
        )
    action = body["action"]
    if action == proto.INJECT and "value" not in body:
        return error(400, 'inject needs a "value" (any JSON, null included)')
    gate = hub.gates.get(gate_id)
    if gate is None:
        return error(404, f"gate {gate_id!r} is not held (already answered, or its app is gone)")
    if action not in gate.actions:
        return error(
            422,
            f"a {gate.event.get('gate')} gate does not take {action!r}; it takes {', '.join(gate.actions)}",
        )
    if action == proto.INJECT and contains_redacted(body["value"]):
        return error(
            422, f"the inject value still contains {REDACTED!r} (a hidden value); replace it with real data"
        )
    try:
        edit = {**edit_fields(gate, body), **simulate_fields(body)}
    except EditRefused as exc:
        return error(exc.status, str(exc))
    body = await with_recorded_value(hub, gate, body)  # simulate: an earlier run's output, if any
    outcome = await hub.resolve_gate(gate, action, body.get("value"), has_value(body), edit, via)
    if outcome == "resumed":
        return JSON({"ok": True, "gateId": gate_id, "action": action})
    if outcome == "timeout":
        return error(
            504,
            f"the app did not confirm gate {gate_id!r} within 5 s; the answer was sent and may still apply",
        )
    if outcome == "busy":
        return error(404, f"gate {gate_id!r} is already being answered")
    return error(404, f"gate {gate_id!r} is not held any more (its app answered it otherwise, or went away)")


async def get_debug(request: Request) -> Response:
    return JSON(_hub(request).debug.to_json())


async def put_debug(request: Request) -> Response:
    hub = _hub(request)
    body = await json_object(
        request, "a JSON object with any of breakpoints, mode, pauseOnError, pauseOnHandoff"
    )
    if not isinstance(body, dict):
        return body
    try:
        state, pending = await hub.set_debug(body)
    except DebugStateError as exc:
        return error(400, str(exc))
    out = state.to_json()
    if pending:
        out["pending"] = pending
    return JSON(out)


async def pause(request: Request) -> Response:
    """POST arms a Pause (the next gate, in any run or that run, holds); DELETE takes it back; GET reads it."""
    hub = _hub(request)
    if request.method == "GET":
        return JSON({"pause": hub.armed.to_json()})
    try:
        body = await json_body(request)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    run_id = body.get("runId") if isinstance(body, dict) else None
    if not isinstance(body, dict) or set(body) - {"runId"} or not (run_id is None or isinstance(run_id, str)):
        return error(400, 'the body must be {} or {"runId": "..."}')
    if request.method == "DELETE":
        await hub.unpause(run_id)
    else:
        await hub.pause(run_id)
    return JSON({"ok": True, "pause": hub.armed.to_json()})


async def not_found(request: Request) -> Response:
    return error(404, f"no such API route: {request.method} {request.url.path} (see docs/api.md)")


routes = [
    Route("/api/health", health, methods=["GET"]),
    Route("/api/runs", list_runs, methods=["GET"]),
    Route("/api/runs/{run_id}", get_run, methods=["GET"]),
    Route("/api/runs/{run_id}", delete_run, methods=["DELETE"]),
    Route("/api/runs/{run_id}/events", run_events, methods=["GET"]),
    Route("/api/runs/{run_id}/abort", abort_run, methods=["POST"]),
    Route("/api/gates", list_gates, methods=["GET"]),
    Route("/api/gates/{gate_id:path}", answer_gate, methods=["POST"]),
    Route("/api/debug", get_debug, methods=["GET"]),
    Route("/api/debug", put_debug, methods=["PUT"]),
    Route("/api/pause", pause, methods=["GET", "POST", "DELETE"]),
    Route("/api/{rest:path}", not_found, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
]
