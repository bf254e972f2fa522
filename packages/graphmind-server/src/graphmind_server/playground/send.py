"""Sending a playground request: plain httpx for OpenAI-compatible, Anthropic and Gemini; LiteLLM's
own `acompletion` for what it reaches, when it is installed. A person asked for each send; nothing
here touches a run. Errors come back as one line (the provider's status and message), never with
the request's headers."""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import Mapping
from typing import Any

import httpx

from . import providers

TIMEOUT_S = 120.0
MAX_N = 10
PARALLEL = 3  # sends of one "send N times" in flight at once


class SendError(Exception):
    """The call failed; str() is the one line to show."""


def _provider_error(status: int, data: Any, text: str) -> str:
    err = data.get("error") if isinstance(data, dict) else None
    message = err.get("message") if isinstance(err, dict) else err if isinstance(err, str) else None
    return f"the provider answered HTTP {status}: {str(message or text or '').strip()[:300]}"


async def _http(client: httpx.AsyncClient, provider: str, req: dict[str, Any], env: Mapping[str, str]) -> Any:
    url, headers, body = providers.build(provider, req, env)
    try:
        res = await client.post(url, json=body, headers=headers)
    except httpx.HTTPError as exc:  # the message names the host, never a header
        raise SendError(f"could not reach {url.split('?')[0]} ({type(exc).__name__}: {exc})") from None
    try:
        data = res.json()
    except ValueError:
        data = None
    if res.status_code >= 400:
        raise SendError(_provider_error(res.status_code, data, res.text))
    if data is None:
        raise SendError(f"the provider's reply is not JSON (HTTP {res.status_code})")
    return data


async def _litellm(req: dict[str, Any]) -> Any:
    # The optional extra (graphmind-server[playground]). Its import takes seconds: in a thread,
    # never on the hub's event loop.
    litellm: Any = await asyncio.to_thread(importlib.import_module, "litellm")
    try:
        reply = await litellm.acompletion(model=req["model"], messages=req["messages"], **req["params"])
    except Exception as exc:  # LiteLLM raises its own mapped types; the line is what the person needs
        raise SendError(f"LiteLLM: {type(exc).__name__}: {str(exc)[:300]}") from None
    return reply.model_dump() if hasattr(reply, "model_dump") else reply


async def send_one(
    client: httpx.AsyncClient, provider: str, req: dict[str, Any], env: Mapping[str, str]
) -> dict[str, Any]:
    """One reply: {text, output, usage, costUsd, ms} or {error, ms}."""
    t0 = time.perf_counter()
    try:
        data = await (_litellm(req) if provider == "litellm" else _http(client, provider, req, env))
        out = providers.parse(provider, data)
    except SendError as exc:
        return {"error": str(exc), "ms": round((time.perf_counter() - t0) * 1000, 1)}
    out["costUsd"] = providers.cost(req["model"], out["usage"])
    out["ms"] = round((time.perf_counter() - t0) * 1000, 1)
    return out


async def send(provider: str, req: dict[str, Any], n: int, env: Mapping[str, str]) -> list[dict[str, Any]]:
    """`n` sends of the same request (variance), at most PARALLEL at once, in order."""
    gate = asyncio.Semaphore(PARALLEL)
    async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:

        async def one() -> dict[str, Any]:
            async with gate:
                return await send_one(client, provider, req, env)

        return list(await asyncio.gather(*(one() for _ in range(n))))
