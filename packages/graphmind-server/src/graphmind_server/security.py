"""Who may connect: the token, Origin and Host checks in front of every route (docs/security.md).

A web page elsewhere must not read prompts or steer an agent: browsers attach an Origin to
WebSocket upgrades and to state-changing requests, and a DNS-rebinding page reaches us with its
own name in Host. Apps and curl send no Origin and a loopback Host, so they pass. With a token
(`graphmind serve --token`), every request must also carry it: `Authorization: Bearer <token>`
(apps, curl), or the cookie the viewer page got when it was opened once with `?token=`.
"""

from __future__ import annotations

import hmac
import json
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.types import ASGIApp, Receive, Scope, Send

from graphmind import protocol as proto

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


def cookie_name(port: int | None) -> str:
    # Cookies ignore the port: two hubs on one host must not overwrite each other's.
    return f"{proto.TOKEN_COOKIE}_{port}" if port else proto.TOKEN_COOKIE


def _cookies(header: str) -> dict[str, str]:
    out = {}
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            out[name] = value
    return out


class Guard:
    def __init__(
        self, app: ASGIApp, *, allowed_origins: list[str] | None, bound_host: str, token: str | None = None
    ) -> None:
        self.app = app
        self.token = token.encode() if token else None
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

    def _token_ok(self, given: str | None) -> bool:
        return (
            given is not None and self.token is not None and hmac.compare_digest(given.encode(), self.token)
        )

    async def _check_token(self, scope: Scope, send: Send, headers: dict[str, str], port: int | None) -> bool:
        """True when the request may go on; otherwise it was answered (401, or the cookie redirect)."""
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer " and self._token_ok(auth[7:].strip()):
            return True
        name = cookie_name(port)
        if self._token_ok(_cookies(headers.get("cookie", "")).get(name)):
            return True
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = dict(query).get("token")
        if scope["type"] == "http" and self._token_ok(given):
            # The printed viewer URL carries the token once: keep it in a cookie and drop it from the address.
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            location = scope.get("path", "/") + (f"?{rest}" if rest else "")
            assert self.token is not None
            cookie = f"{name}={self.token.decode()}; Path=/; HttpOnly; SameSite=Strict"
            await send(
                {
                    "type": "http.response.start",
                    "status": 303,
                    "headers": [
                        (b"location", location.encode("latin-1")),
                        (b"set-cookie", cookie.encode()),
                        (b"content-length", b"0"),
                        *SECURITY_HEADERS,
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return False
        await _deny(
            scope,
            send,
            "this hub requires its token: send Authorization: Bearer <token> "
            f"(apps find it in the hub's token file or {proto.TOKEN_ENV}), or open the viewer URL "
            "graphmind serve printed (it carries ?token=)",
            status=401,
        )
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        server = scope.get("server")
        port = server[1] if server else None
        if self.token is not None and not await self._check_token(scope, send, headers, port):
            return
        if self.allowed is None:
            await self.app(scope, receive, _with_headers(send) if scope["type"] == "http" else send)
            return
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
            if normalize_origin(origin) is None:
                advice = (
                    "a page with no http(s) origin (a sandboxed frame, a file:// page) cannot be allowed by "
                    "name; serve it over http and add that origin to GRAPHMIND_ALLOWED_ORIGINS, or set "
                    "GRAPHMIND_ALLOWED_ORIGINS=* to turn the check off"
                )
            else:
                advice = f"set GRAPHMIND_ALLOWED_ORIGINS={origin} to allow it (or * to turn the check off)"
            await _deny(
                scope,
                send,
                f"Origin {origin!r} may not use the hub: only its own loopback origins may; {advice}",
            )
            return
        await self.app(scope, receive, _with_headers(send) if scope["type"] == "http" else send)


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Any) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
        await send(message)

    return wrapped


async def _deny(scope: Scope, send: Send, message: str, status: int = 403) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": headers + SECURITY_HEADERS})
        await send({"type": "http.response.body", "body": body})
    elif "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        code = proto.CLOSE_UNAUTHORIZED if status == 401 else proto.CLOSE_FORBIDDEN
        await send({"type": "websocket.close", "code": code, "reason": message[:120]})
