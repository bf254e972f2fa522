"""Who may connect: the token, Origin and Host checks in front of every route (docs/security.md).

A web page elsewhere must not read prompts or steer an agent: browsers attach an Origin to
WebSocket upgrades and to state-changing requests, and a DNS-rebinding page reaches us with its
own name in Host. Apps and curl send no Origin and a loopback Host, so they pass. With a token
(`graphmind serve --token`), every request for data or control must carry it explicitly:
`Authorization: Bearer <token>` (curl, the viewer's fetches), `Authorization: Graphmind-Proof`
after the mutual proof (`graphmind mcp`, `graphmind viewer-url`: access/proof.py), the subprotocol
`graphmind.token.<hex>` (the viewer's live feed: a browser's WebSocket cannot send headers), or,
on `/ingest`, the mutual proof handshake (`ingest/auth.py`). Never a cookie: cookies ignore the
port, so one set here would go to every other server on 127.0.0.1. The viewer's own files (code,
no data) are served without it, and so is the redeeming of a one-time viewer link
(access/viewer_codes.py), so the page can load and get the token without any URL carrying it.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from graphmind import protocol as proto

from ..hub.config import normalize_origin
from .proof import CHALLENGE_PATH, SCHEME, Sessions
from .viewer_codes import REDEEM_PATH

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


# Earlier hubs kept the viewer's token in this cookie (graphmind_token_<port>); a browser still
# holding one sends it to every port of 127.0.0.1, so the hub tells it to forget it.
OLD_COOKIE = proto.TOKEN_COOKIE
CHALLENGE_SCOPE_KEY = "graphmind.client_nonce"  # /ingest: the app's nonce, the proof handshake to do


def _old_cookies(header: str) -> list[str]:
    names = (part.strip().partition("=")[0] for part in header.split(";"))
    return [name for name in names if name == OLD_COOKIE or name.startswith(OLD_COOKIE + "_")]


def is_public(scope: Scope) -> bool:
    """The viewer's own files (code and styles, no data), the redeeming of a one-time viewer
    link (access/viewer_codes.py; it needs the link's code) and the hub's half of a command's mutual proof
    (access/proof.py; it hands out nothing but the hub's proof). Everything else under /api, /ingest is not."""
    path = str(scope.get("path", ""))
    if scope["type"] != "http":
        return False
    if path in (REDEEM_PATH, CHALLENGE_PATH):
        return scope.get("method") == "POST"
    return scope.get("method") in ("GET", "HEAD") and not (
        path.startswith("/api") or path.startswith("/ingest") or path.startswith("/v1")
    )


def _subprotocol_token(header: str) -> str | None:
    for offered in header.split(","):
        offered = offered.strip()
        if offered.startswith(proto.TOKEN_SUBPROTOCOL_PREFIX):
            try:
                return bytes.fromhex(offered[len(proto.TOKEN_SUBPROTOCOL_PREFIX) :]).decode("utf-8")
            except ValueError:
                return None
    return None


class Guard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_origins: list[str] | None,
        bound_host: str,
        token: str | None = None,
        trust: Callable[[Any], None] | None = None,
        sessions: Sessions | None = None,
    ) -> None:
        self.app = app
        self.sessions = sessions  # the pairs a command's mutual proof opened (access/proof.py)
        # Called with scope["client"] once a request on that connection proved itself (access/limits.py).
        self.trust = trust
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

    async def _check_token(self, scope: Scope, send: Send, headers: dict[str, str]) -> bool:
        """True when the request may go on; otherwise it was answered 401."""
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer " and self._token_ok(auth[7:].strip()):
            self._trusted(scope)
            return True
        if auth[: len(SCHEME)].lower() == SCHEME and self.sessions is not None and self.sessions.check(auth):
            self._trusted(scope)
            return True
        if scope["type"] == "websocket":
            if self._token_ok(_subprotocol_token(headers.get("sec-websocket-protocol", ""))):
                self._trusted(scope)
                return True
            nonce = headers.get(proto.CLIENT_NONCE_HEADER)
            if (
                scope.get("path") == "/ingest"
                and headers.get(proto.AUTH_HEADER) == proto.AUTH_SCHEME
                and proto.valid_nonce(nonce)
            ):
                scope[CHALLENGE_SCOPE_KEY] = nonce  # ingest proves the hub and checks the app's proof
                return True
        if is_public(scope):
            return True
        await _deny(
            scope,
            send,
            "this hub requires its token: send Authorization: Bearer <token> "
            f"(apps and commands find it in {proto.TOKEN_ENV}, {proto.TOKEN_FILE_ENV} or the hub's token file), "
            "or open the viewer page graphmind serve printed (file://.../viewer-<port>.html; "
            "`graphmind viewer-url` prints it again)",
            status=401,
        )
        return False

    def _trusted(self, scope: Scope) -> None:
        if self.trust is not None:
            self.trust(scope.get("client"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        server = scope.get("server")
        port = server[1] if server else None
        if self.token is None:
            self._trusted(scope)  # without a token, anything that completed its headers is trusted
        elif not await self._check_token(scope, send, headers):
            return
        wrap = (
            _with_headers(send, _old_cookies(headers.get("cookie", ""))) if scope["type"] == "http" else send
        )
        if self.allowed is None:
            await self.app(scope, receive, wrap)
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
        await self.app(scope, receive, wrap)


def _with_headers(send: Send, old_cookies: list[str]) -> Send:
    forget = [(b"set-cookie", f"{name}=; Max-Age=0; Path=/".encode()) for name in old_cookies]

    async def wrapped(message: Any) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS, *forget]}
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
