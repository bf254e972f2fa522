"""The playground's routes (docs/api.md): GET /api/playground reads a stored model call as an
editable request, with the provider it came from and whether the hub can send it; POST sends it."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..base.jsontext import JSON
from ..playground import providers
from ..playground.send import MAX_N, send
from ..store.calls import execution
from ..store.usage import answered_model
from .request import error, hub_of, json_object


async def _call(
    request: Request, run_id: Any, instance_id: Any
) -> tuple[dict[str, Any] | None, Response | None]:
    if not isinstance(run_id, str) or not run_id or not isinstance(instance_id, str) or not instance_id:
        return None, error(400, "name the model call: run=<run id>&instance=<instanceId>")
    hub = hub_of(request)
    await hub.store.barrier()
    found = await hub.store.read(execution, run_id, instance_id)
    if found is None:
        return None, error(404, f"no execution {instance_id!r} in run {run_id!r}")
    if found["started"].get("kind") != "llm":
        return None, error(
            422,
            "the playground opens model calls only (kind llm); this one is a "
            + str(found["started"].get("kind")),
        )
    return found, None


def _described(found: dict[str, Any]) -> dict[str, Any]:
    started, ended = found["started"], found["ended"] or {}
    req = providers.request_of(started.get("input"), started.get("attrs"))
    provider = providers.provider_of(started.get("attrs"), req["model"] or answered_model(ended))
    recorded: dict[str, Any] = {
        "output": ended.get("output"),
        "error": ended.get("error"),
        "usage": ended.get("usage"),
    }
    if isinstance(ended.get("usage"), dict) and req["model"]:
        u = ended["usage"]
        recorded["costUsd"] = u.get("costUsd") if isinstance(u.get("costUsd"), (int, float)) else providers.cost(
            req["model"], {k: v if type(v) is int else 0 for k, v in (("inputTokens", u.get("inputTokens")),
                           ("outputTokens", u.get("outputTokens")), ("cachedTokens", u.get("cacheReadTokens") or u.get("cachedTokens")))}
        )  # fmt: skip
    env = providers.environment()
    return {
        "provider": provider,
        "providers": {
            name: {"label": p.label, "missing": p.missing(env)} for name, p in providers.PROVIDERS.items()
        },
        "missing": providers.PROVIDERS[provider].missing(env)
        if provider
        else "the hub cannot tell which provider this call went to: pick one",
        "request": req,
        "recorded": recorded,
        "toolsLeftOut": bool((started.get("input") or {}).get("tools"))
        if isinstance(started.get("input"), dict)
        else False,
    }


async def read_route(request: Request) -> Response:
    q = request.query_params
    found, refused = await _call(request, q.get("run"), q.get("instance"))
    if refused is not None or found is None:
        return refused or error(404, "no such call")
    return JSON(_described(found))


async def send_route(request: Request) -> Response:
    body = await json_object(request, '{"runId", "instanceId", "request": {...}, "n"?: 1..10, "provider"?}')
    if not isinstance(body, dict):
        return body
    found, refused = await _call(request, body.get("runId"), body.get("instanceId"))
    if refused is not None or found is None:
        return refused or error(404, "no such call")
    n = body.get("n", 1)
    if type(n) is not int or not 1 <= n <= MAX_N:
        return error(400, f"n must be a whole number from 1 to {MAX_N} (got {n!r})")
    try:
        req = providers.check_request(body.get("request"))
    except ValueError as exc:
        return error(400, str(exc))
    described = _described(found)
    provider = body.get("provider") or described["provider"]
    if provider not in providers.PROVIDERS:
        return error(400, f"provider must be one of {', '.join(providers.PROVIDERS)} (got {provider!r})")
    env = providers.environment()
    missing = providers.PROVIDERS[provider].missing(env)
    if missing is not None:
        return error(412, missing)
    replies = await send(provider, req, n, env)
    return JSON({"provider": provider, "model": req["model"], "replies": replies})


routes = [
    Route("/api/playground", read_route, methods=["GET"]),
    Route("/api/playground", send_route, methods=["POST"]),
]
