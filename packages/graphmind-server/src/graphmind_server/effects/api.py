"""`GET /api/runs/{id}/effects`: a run's effects ledger (docs/api.md, "Effects"; store/effects.py)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..base.jsontext import JSON
from ..http.request import error
from ..http.request import hub_of as _hub
from ..store.effects import run_ledger


async def effects_route(request: Request) -> Response:
    hub = _hub(request)
    run_id = request.path_params["run_id"]
    await hub.store.barrier()  # what the app sent before this call is in the ledger
    ledger = await hub.store.read(run_ledger, run_id)
    if ledger is None:
        return error(404, f"no run {run_id!r} (deleted, pruned, or never reported)")
    return JSON(ledger)


routes = [Route("/api/runs/{run_id}/effects", effects_route, methods=["GET"])]
