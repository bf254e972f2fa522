"""What every route of the control API shares: the hub a request reaches, its errors, its query
parameters (docs/api.md)."""

from __future__ import annotations

from starlette.requests import Request

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
