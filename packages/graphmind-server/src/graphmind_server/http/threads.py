"""Threads and labels under /api/ (docs/api.md "Threads" and "Labels")."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..base.jsontext import JSON
from ..store import labels, reads, threads
from ..store.ops import PutLabel
from .request import BadRequest, error, hub_of, int_param, json_body


async def list_threads(request: Request) -> Response:
    hub = hub_of(request)
    try:
        limit = int_param(request, "limit", 100, 1, 1000)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    await hub.store.barrier()
    found = await hub.store.read(threads.list_threads, request.query_params.get("app") or None, limit)
    return JSON({"threads": found})


async def thread_turns(request: Request) -> Response:
    """A thread's runs, oldest first, each with the first model call's input and the last one's output."""
    hub = hub_of(request)
    thread = request.path_params["thread"]
    try:
        limit = int_param(request, "limit", 100, 1, 1000)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    await hub.store.barrier()
    runs = await hub.store.read(reads.thread_turns, thread, limit)
    if not runs:
        return error(404, f"no run names the thread {thread!r}")
    held = hub.held_counts()
    for run in runs:
        run["heldCount"] = held.get(run["id"], 0)
    return JSON({"thread": thread, "runs": runs})


async def put_labels(request: Request) -> Response:
    """PUT a run's labels (or a node's, under /nodes/{node_id}/labels): {"note", "tags"}; an empty
    note with no tags removes them."""
    hub = hub_of(request)
    run_id = request.path_params["run_id"]
    node_id = request.path_params.get("node_id", "")
    try:
        label = labels.clean(await json_body(request))
    except BadRequest as exc:
        return error(exc.status, str(exc))
    except labels.LabelError as exc:
        return error(400, str(exc))
    if not await hub.store.submit(PutLabel(run_id, node_id, label)):
        return error(404, f"no run {run_id!r} (deleted, pruned, or never reported)")
    await hub.store.barrier()
    run = await hub.store.read(reads.get_run, run_id)
    if run is not None:  # every viewer sees the label now, not at the run's next event
        run.pop("nodes", None)  # the list's Run object (the viewer keeps a run's nodes apart)
        run["heldCount"] = hub.held_counts().get(run_id, 0)
        hub.broadcast({"type": "run", "run": run})
    return JSON({"runId": run_id, "nodeId": node_id or None, "labels": label})


routes = [
    Route("/api/threads", list_threads, methods=["GET"]),
    Route("/api/threads/{thread:path}", thread_turns, methods=["GET"]),
    Route("/api/runs/{run_id}/labels", put_labels, methods=["PUT"]),
    Route("/api/runs/{run_id}/nodes/{node_id:path}/labels", put_labels, methods=["PUT"]),
]
