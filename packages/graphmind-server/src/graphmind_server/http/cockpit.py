"""The viewer's cockpit routes (docs/api.md): search, the run list's filters, compare, export, and
the price table in use."""

from __future__ import annotations

import contextlib
import io
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..base.jsontext import JSON
from ..compare.jsondiff import parse_keys
from ..compare.runs import CompareError, compare
from ..export.record import Exporter, write_runs
from ..export.source import select_runs
from ..store import labels, prices, reads
from ..store.ops import IndexNow
from ..store.readonly import snapshot
from ..store.search import search
from .request import BadRequest, error, hub_of, int_param

EXPORT_FORMATS = {"jsonl": "application/x-ndjson", "otlp": "application/json", "json": "application/json"}
_TRUE = ("1", "true", "yes", "on")


def _ms_param(request: Request, name: str) -> float | None:
    text = request.query_params.get(name)
    if text is None or text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value == value or value < 0 or value == float("inf"):
        raise BadRequest(f"{name} must be a time in ms since the epoch (got {text!r})")
    return value


def _flag(request: Request, name: str) -> bool:
    text = request.query_params.get(name)
    if text is None or text == "":
        return False
    if text.lower() in _TRUE:
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise BadRequest(f"{name} must be 1 or 0 (got {text!r})")


def run_filter(request: Request) -> reads.RunFilter:
    """GET /api/runs's filters beyond status and app; BadRequest names a bad one."""
    q = request.query_params
    text = q.get("q")
    return reads.RunFilter(
        q=text if text and text.strip() else None,
        error=_flag(request, "error"),
        held=_flag(request, "held"),
        kind=q.get("kind") or None,
        tool=q.get("tool") or None,
        model=q.get("model") or None,
        agent=q.get("agent") or None,
        since=_ms_param(request, "since"),
        until=_ms_param(request, "until"),
        thread=q.get("thread") or None,
        tag=q.get("tag") or None,
    )


async def index_now(hub: Any) -> None:
    """The writer indexes in its idle time: before a search, it indexes what is left (everything
    stored before this call). A failure to index leaves the search with what is indexed."""
    await hub.store.barrier()
    if hub.store.not_storing is None:
        with contextlib.suppress(Exception):
            await hub.store.submit(IndexNow())


async def search_route(request: Request) -> Response:
    hub = hub_of(request)
    query = request.query_params.get("q", "")
    run_id = request.query_params.get("run") or None
    try:
        limit = int_param(request, "limit", 100, 1, 1000)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    if not query.strip():
        return error(400, "q must name what to search for (words; every one must appear)")
    await index_now(hub)
    agent = request.query_params.get("agent") or None
    thread = request.query_params.get("thread") or None
    hits = await hub.store.read(search, query, run_id, limit, agent, thread)
    if agent is None:  # a person's notes and tags (store/labels.py) are nobody's agent's
        found = await hub.store.read(labels.search, query, run_id, limit, thread)
        hits = found + hits[: limit - len(found)]
    return JSON(
        {
            "q": query,
            "run": run_id,
            "agent": agent,
            "thread": thread,
            "hits": hits,
            "more": len(hits) == limit,
        }
    )


async def compare_route(request: Request) -> Response:
    hub = hub_of(request)
    a, b = request.query_params.get("a"), request.query_params.get("b")
    if not a or not b:
        return error(400, "compare needs two runs: ?a=<run id>&b=<run id>")
    await hub.store.barrier()
    try:
        result = await hub.store.read(compare, a, b, parse_keys(request.query_params.get("ignore")))
    except CompareError as exc:
        return error(exc.status, str(exc))
    return JSON(result)


def _export(conn: Any, run_id: str, fmt: str) -> str | None:
    if reads.run_owner(conn, run_id) is None:
        return None
    out = io.StringIO()
    with snapshot(conn):  # one snapshot, as `graphmind record` reads it
        write_runs(conn, select_runs(conn, [run_id], None, None), fmt, out, Exporter(False, 0))
    return out.getvalue()


async def export_route(request: Request) -> Response:
    """The `graphmind record` export of one run (secret-looking keys removed, as the CLI does)."""
    hub = hub_of(request)
    run_id = request.path_params["run_id"]
    fmt = request.query_params.get("format", "jsonl")
    if fmt not in EXPORT_FORMATS:
        return error(400, f"format must be one of {', '.join(EXPORT_FORMATS)} (got {fmt!r})")
    await hub.store.barrier()
    text = await hub.store.read(_export, run_id, fmt)
    if text is None:
        return error(404, f"no run {run_id!r} (deleted, pruned, or never reported)")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run_id)[:80]
    ext = "otlp.json" if fmt == "otlp" else fmt
    return Response(
        text,
        media_type=EXPORT_FORMATS[fmt],
        headers={"content-disposition": f'attachment; filename="graphmind-{safe}.{ext}"'},
    )


async def prices_route(request: Request) -> Response:
    return JSON(
        {**prices.source(), "models": {k: list(v) for k, v in prices.table(prices.current()).items()}}
    )


routes = [
    Route("/api/search", search_route, methods=["GET"]),
    Route("/api/compare", compare_route, methods=["GET"]),
    Route("/api/prices", prices_route, methods=["GET"]),
    Route("/api/runs/{run_id}/export", export_route, methods=["GET"]),
]
