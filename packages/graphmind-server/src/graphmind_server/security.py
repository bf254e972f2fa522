"""Who may connect: Origin and Host checks in front of every route (docs/api.md, "Who may connect").

A web page elsewhere must not read prompts or steer an agent: browsers attach an Origin to
WebSocket upgrades and to state-changing requests, and a DNS-rebinding page reaches us with its
own name in Host. Apps and curl send no Origin and a loopback Host, so they pass.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from .config import normalize_origin

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", "[::]", ""})
STATE_CHANGING = frozenset({"POST", "PUT", "DELETE", "PATCH"})
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"referrer-policy", b"no-referrer"),
]


def host_name(host_header: str) -> str:
    """`name` of `name[:port]`, keeping IPv6 brackets, lower case."""
    host = host_header.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end != -1 else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class Guard:
    def __init__(self, app: ASGIApp, *, allowed_origins: list[str] | None, bound_host: str) -> None:
        self.app = app
        self.allowed = allowed_origins  # None: "*", every check off
        bound = _bracket(bound_host.lower())
        self.hosts = set(LOOPBACK_NAMES)
        if bound not in WILDCARD_HOSTS:
            self.hosts.add(bound)
        for origin in allowed_origins or []:
            self.hosts.add(host_name(origin.split("://", 1)[1]))
        self.bound = bound

    def _origin_ok(self, origin: str, port: int | None) -> bool:
        normal = normalize_origin(origin)
        if normal is None or self.allowed is None:
            return self.allowed is None
        if normal in self.allowed:
            return True
        names = set(LOOPBACK_NAMES)
        if self.bound not in WILDCARD_HOSTS:
            names.add(self.bound)
        return port is not None and normal in {f"http://{name}:{port}" for name in names}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.allowed is None:
            await self.app(scope, receive, _with_headers(send) if scope["type"] == "http" else send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        server = scope.get("server")
        port = server[1] if server else None
        host = headers.get("host")
        if host is not None and host_name(host) not in self.hosts:
            name = host_name(host)
            await _deny(
                scope,
                send,
                f"Host {name!r} is not a loopback name of this hub, so the request was refused "
                "(DNS rebinding protection); if you reach the hub through that name on purpose, set "
                f"GRAPHMIND_ALLOWED_ORIGINS=http://{host.strip()}",
            )
            return
        origin = headers.get("origin")
        checked = scope["type"] == "websocket" or scope.get("method") in STATE_CHANGING
        if origin is not None and checked and not self._origin_ok(origin, port):
            await _deny(
                scope,
                send,
                f"Origin {origin!r} may not use the hub: only its own loopback origins may; "
                f"set GRAPHMIND_ALLOWED_ORIGINS={origin} to allow it (or * to turn the check off)",
            )
            return
        await self.app(scope, receive, _with_headers(send) if scope["type"] == "http" else send)


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Any) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
        await send(message)

    return wrapped


async def _deny(scope: Scope, send: Send, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 403, "headers": headers + SECURITY_HEADERS})
        await send({"type": "http.response.body", "body": body})
    elif "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": 403, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 4003, "reason": message[:120]})
