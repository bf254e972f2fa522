"""GET /api/trends (docs/api.md): cost, tokens, latency and errors over a time range."""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..base.jsontext import JSON
from ..store.trends import DAY_MS, GROUPS, TrendQuery, trends
from .cockpit import _ms_param
from .request import BadRequest, error, hub_of, int_param

DEFAULT_DAYS = 30
MAX_DAYS = 400


def trend_query(request: Request) -> TrendQuery:
    q = request.query_params
    now = time.time() * 1000.0
    until = _ms_param(request, "until") or now
    since = _ms_param(request, "since")
    since = until - DEFAULT_DAYS * DAY_MS if since is None else since
    if not since < until:
        raise BadRequest("since must be before until (both in ms since the epoch)")
    if until - since > MAX_DAYS * DAY_MS:
        raise BadRequest(f"the range is over {MAX_DAYS} days; narrow since/until")
    group = q.get("group") or "model"
    if group not in GROUPS:
        raise BadRequest(f"group must be one of {', '.join(GROUPS)} (got {group!r})")
    bucket = q.get("bucket") or None
    if bucket not in (None, "hour", "day"):
        raise BadRequest(f"bucket must be hour or day (got {bucket!r})")
    if bucket == "hour" and until - since > 31 * DAY_MS:
        raise BadRequest("bucket=hour covers at most 31 days; use bucket=day or a shorter range")
    tz = int_param(request, "tz", 0, -14 * 60, 14 * 60)
    return TrendQuery(since, until, group, bucket, tz, q.get("app") or None)


async def trends_route(request: Request) -> Response:
    hub = hub_of(request)
    try:
        query = trend_query(request)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    await hub.store.barrier()
    return JSON(await hub.store.read(trends, query))


routes = [Route("/api/trends", trends_route, methods=["GET"])]
