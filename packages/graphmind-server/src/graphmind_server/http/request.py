"""What every route of the control API shares: the hub a request reaches, its errors, its query
parameters (docs/api.md)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from graphmind import protocol as proto

from ..base.jsontext import JSON
from ..hub.state import Hub


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def error(status: int, message: str) -> JSON:
    return JSON({"error": message}, status_code=status)


class BadRequest(Exception):
    status = 400


class TooLarge(BadRequest):
    status = 413


def int_param(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = lo - 1
    if not lo <= value <= hi:
        raise BadRequest(f"{name} must be a whole number from {lo} to {hi} (got {text!r})")
    return value


# Every hub -> app frame must fit the app's HUB_MAX_FRAME (an inject value travels in gate.resolve,
# breakpoints in debug.state): a body over MAX_BODY is refused before it is read in full.
MAX_BODY = proto.MAX_INJECT_BYTES


async def json_body(request: Request) -> Any:
    """The body as JSON: strict (no NaN, no out-of-range numbers), bounded by MAX_BODY; {} when empty."""
    too_large = TooLarge(
        f"the body is over {MAX_BODY} bytes; an inject value or a debug state must stay under that "
        "(an app refuses any hub frame over graphmind.protocol.HUB_MAX_FRAME)"
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise too_large
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except BadRequest:
        raise
    except RecursionError:
        raise BadRequest("the body is nested too deeply to read") from None
    except ValueError as exc:
        raise BadRequest(f"the body is not JSON ({str(exc)[:200]})") from None


def _refuse_constant(name: str) -> None:
    raise BadRequest(f"the body contains {name}, which is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0:
        raise BadRequest(f"the number {text[:40]} in the body is out of range")
    return value


async def json_object(request: Request, shape: str) -> dict[str, Any] | Response:
    """The body as a JSON object, or the one-line error response to return (`shape` says what the
    route takes, e.g. '{"runId", "instanceId"}')."""
    try:
        body = await json_body(request)
    except BadRequest as exc:
        return error(exc.status, str(exc))
    if not isinstance(body, dict):
        return error(400, f"the body must be {shape}")
    return body
