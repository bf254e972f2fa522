"""The context routes (docs/api.md, "Context"): a model step's breakdown and step diff, a run's input
tokens per step, and the surgery preview at a held call. Computed here, when asked: never on the
app's call path."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from graphmind import protocol as proto

from ..base.jsontext import JSON
from ..http.request import BadRequest, error, json_body
from ..http.request import hub_of as _hub
from ..hub.state import Hub
from .breakdown import breakdown
from .diff import step_diff
from .report import ContextError, model_step_of, node_context, run_context, step_model
from .surgery import SurgeryError, apply
from .tokenizer import for_model


def _held(hub: Hub, run_id: str, node_id: str, instance_id: str) -> bool:
    """A before gate holds this execution now: its input can still be edited."""
    return any(
        g.run_id == run_id
        and g.event.get("nodeId") == node_id
        and g.event.get("instanceId") == instance_id
        and g.event.get("gate") == proto.BEFORE
        for g in hub.gates.values()
    )


async def node_context_route(request: Request) -> Response:
    hub = _hub(request)
    run_id, node_id = request.path_params["run_id"], request.path_params["node_id"]
    instance = request.query_params.get("instance")
    await hub.store.barrier()  # what the app sent before this call is in the store
    try:
        body = await hub.store.read(node_context, run_id, node_id, instance)
    except ContextError as exc:
        return error(exc.status, str(exc))
    body["held"] = _held(hub, run_id, node_id, body["instanceId"])
    return JSON(body)


async def run_context_route(request: Request) -> Response:
    hub = _hub(request)
    await hub.store.barrier()
    try:
        return JSON(await hub.store.read(run_context, request.path_params["run_id"]))
    except ContextError as exc:
        return error(exc.status, str(exc))


async def edit_route(request: Request) -> Response:
    """POST: the input with the ops applied and its breakdown; the viewer then sends that input as
    the held gate's `continue` answer (the one edit path)."""
    hub = _hub(request)
    run_id, node_id = request.path_params["run_id"], request.path_params["node_id"]
    instance = request.query_params.get("instance")
    try:
        body = await json_body(request)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    if not isinstance(body, dict) or "input" not in body or not isinstance(body.get("ops"), list):
        return error(
            400, 'the body must be {"input": <the held call\'s input>, "ops": [{"path", "op"}, ...]}'
        )
    await hub.store.barrier()
    try:
        step = await hub.store.read(model_step_of, run_id, node_id, instance)
        model = step_model(step)
        edited = apply(body["input"], body["ops"], for_model(model))
    except (ContextError, SurgeryError) as exc:
        return error(exc.status, str(exc))
    summary, counted = breakdown(edited, model, None)
    given = breakdown(body["input"], model, None)[1]
    ref = {"nodeId": node_id, "instanceId": step.instance_id}
    out = {
        "runId": run_id,
        "nodeId": node_id,
        "instanceId": step.instance_id,
        "agent": step.agent,
        **summary,
        "diff": step_diff(counted, given, ref),  # against the input as given: what the ops took out
        "held": _held(hub, run_id, node_id, step.instance_id),
    }
    return JSON({"input": edited, "breakdown": out})


routes = [
    Route("/api/runs/{run_id}/context", run_context_route, methods=["GET"]),
    Route("/api/runs/{run_id}/nodes/{node_id:path}/context", node_context_route, methods=["GET"]),
    Route("/api/runs/{run_id}/nodes/{node_id:path}/context/edit", edit_route, methods=["POST"]),
]
