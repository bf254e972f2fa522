"""A hub with a token refuses every route without it (docs/security.md). The routes are read from
the app the hub runs (its Starlette routes, the cockpit's and `/v1/traces` included), not from a
hand-kept list, so a route added tomorrow is checked the day it lands; only the viewer's own files,
the redeeming of a one-time viewer link and the hub's half of a command's mutual proof (it hands out
nothing but a proof of the token, docs/security.md) are public."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from starlette.routing import Mount, Route, WebSocketRoute
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from graphmind_server.access.proof import CHALLENGE_PATH
from graphmind_server.access.viewer_codes import REDEEM_PATH

TOKEN = "a-test-token-that-is-long-enough-0123456789"
PUBLIC = {("GET", "/"), ("POST", REDEEM_PATH), ("POST", CHALLENGE_PATH)}


def _concrete(path: str) -> str:
    """A request path for a route's pattern: every `{param}` / `{param:path}` filled in."""
    return re.sub(r"\{[^}]+\}", "x1", path)


def app_routes(app: Any) -> tuple[list[tuple[str, str]], list[str]]:
    """(method, path) of every HTTP route and the path of every WebSocket route of a Starlette app."""
    http: list[tuple[str, str]] = []
    ws: list[str] = []
    for route in app.routes:
        if isinstance(route, Route):
            http += [(m, _concrete(route.path)) for m in sorted(route.methods or ()) if m != "HEAD"]
        elif isinstance(route, WebSocketRoute):
            ws.append(_concrete(route.path))
        elif isinstance(route, Mount):
            http.append(("GET", route.path or "/"))  # the viewer's files
    return http, ws


@pytest.fixture
def token_hub(make_hub: Callable[..., Any]) -> Any:
    return make_hub(token=TOKEN)


def test_every_route_the_app_has_refuses_a_request_without_the_token(token_hub: Any) -> None:
    http, ws = app_routes(token_hub.handle._server.config.app)
    # the list is the app's: the cockpit's routes and the OTLP receiver are in it
    for needed in [("GET", "/api/runs/x1/export"), ("GET", "/api/compare"), ("POST", "/v1/traces")]:
        assert needed in http, needed
    assert "/ingest" in ws and "/api/live" in ws
    wrong = {"Authorization": "Bearer " + TOKEN[:-1]}
    open_routes = []
    for method, path in http:
        for headers in ({}, wrong):
            status, _ = token_hub.api(method, path, headers=headers)
            if (method, path) in PUBLIC:
                continue
            if status != 401:
                open_routes.append(f"{method} {path} -> {status}")
    assert open_routes == [], "routes that answer without the token:\n" + "\n".join(open_routes)
    for path in ws:
        with pytest.raises(InvalidStatus) as refused:
            connect(f"ws://127.0.0.1:{token_hub.port}{path}", open_timeout=5).close()
        assert refused.value.response.status_code == 401, path
    good = {"Authorization": f"Bearer {TOKEN}"}
    assert token_hub.api("GET", "/api/runs/x1/export", headers=good)[0] == 404  # with it: no such run
    assert token_hub.api("GET", "/", headers={})[0] == 200  # the viewer's page is public
