"""The mutual proof for the hub's HTTP API: what `graphmind viewer-url` and `graphmind mcp` use
instead of sending the token (docs/security.md, "Commands: mutual proof").

The same HMAC handshake as an app's `/ingest` upgrade (`ingest/auth.py`, core's
`_wire/hub_link.py`), over HTTP:

1. the command posts `CHALLENGE_PATH` with a fresh nonce (`x-graphmind-auth`,
   `x-graphmind-client-nonce`) and nothing else: no token;
2. the hub answers with its own nonce and HMAC(token, hub label, both nonces); a listener that
   cannot (a squatter on the port, a tokenless hub behind a stale token file) is told nothing
   more, and the command says so in one line;
3. only then does the command send requests, each with
   `Authorization: Graphmind-Proof <client nonce> <server nonce> <HMAC(token, app label, ...)>`.
   The hub accepts that pair for SESSION_TTL_S after its last use (at most MAX_SESSIONS pairs); a
   command that meets 401 later proves itself again.

The token never leaves the command. Plain `Authorization: Bearer` (curl, the viewer's fetches)
is still accepted by the hub.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from graphmind import protocol as proto

from ..base.jsontext import JSON

CHALLENGE_PATH = "/api/auth/challenge"
SCHEME = "graphmind-proof"  # the Authorization scheme (case-insensitive, like every scheme)
SESSION_TTL_S = 600.0
MAX_SESSIONS = 64


# ---- the hub's half ---------------------------------------------------------------------------
class Sessions:
    """Server nonce -> (client nonce, last use): the pairs this hub proved itself for."""

    def __init__(self, token: str | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.token = token
        self._clock = clock
        self._pairs: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def challenge(self, client_nonce: str) -> list[tuple[str, str]]:
        """The answer's headers: the scheme, a fresh server nonce and the hub's proof."""
        assert self.token is not None
        server_nonce = proto.new_nonce()
        self._pairs[server_nonce] = (client_nonce, self._clock())
        while len(self._pairs) > MAX_SESSIONS:
            self._pairs.popitem(last=False)
        hub_proof = proto.proof(self.token, proto.HUB_PROOF_LABEL, client_nonce, server_nonce)
        return [
            (proto.AUTH_HEADER, proto.AUTH_SCHEME),
            (proto.SERVER_NONCE_HEADER, server_nonce),
            (proto.SERVER_PROOF_HEADER, hub_proof),
        ]

    def check(self, authorization: str) -> bool:
        """Whether `Authorization: Graphmind-Proof <client nonce> <server nonce> <proof>` is valid."""
        parts = authorization.split()
        if self.token is None or len(parts) != 4 or parts[0].lower() != SCHEME:
            return False
        _, client_nonce, server_nonce, given = parts
        pair = self._pairs.get(server_nonce)
        now = self._clock()
        if pair is None or pair[0] != client_nonce or now - pair[1] > SESSION_TTL_S:
            return False
        expected = proto.proof(self.token, proto.APP_PROOF_LABEL, client_nonce, server_nonce)
        if not proto.proof_ok(expected, given):
            return False
        self._pairs[server_nonce] = (client_nonce, now)
        self._pairs.move_to_end(server_nonce)
        return True


async def challenge(request: Request) -> Response:
    """Public (security.is_public): the hub proves it knows the token, for a client nonce."""
    sessions: Sessions = request.app.state.proof_sessions
    nonce = request.headers.get(proto.CLIENT_NONCE_HEADER)
    if request.headers.get(proto.AUTH_HEADER) != proto.AUTH_SCHEME or not proto.valid_nonce(nonce):
        return JSON({"error": f"send {proto.AUTH_HEADER} and a {proto.CLIENT_NONCE_HEADER}"}, status_code=400)
    if sessions.token is None:
        return JSON({"error": "this hub has no token"}, status_code=409)
    assert nonce is not None
    return JSON({}, headers=dict(sessions.challenge(nonce)) | {"cache-control": "no-store"})


routes = [Route(CHALLENGE_PATH, challenge, methods=["POST"])]


# ---- the command's half -----------------------------------------------------------------------
class NotOurHub(Exception):
    """The listener did not prove it knows the token; str() is the one line to print."""


class Unreachable(Exception):
    """Nothing answers on the port; str() is the one line to print."""


class ProvenHub:
    """HTTP calls to the hub on a loopback port, authenticated by the mutual proof when a token is
    known (none: plain calls, for a hub without a token). `token_source` names where the token came
    from, for the one line said when the listener is not the hub."""

    def __init__(self, port: int, token: str | None, token_source: str, timeout: float = 8.0) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.token = token
        self.token_source = token_source
        self.timeout = timeout
        # Loopback only: never through a proxy from the environment.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._auth: dict[str, str] | None = None

    def _prove(self) -> dict[str, str]:
        assert self.token is not None
        nonce = proto.new_nonce()
        headers = {proto.AUTH_HEADER: proto.AUTH_SCHEME, proto.CLIENT_NONCE_HEADER: nonce}
        status, _, answer = self._send("POST", CHALLENGE_PATH, b"{}", headers, self.timeout)
        server_nonce = answer.get(proto.SERVER_NONCE_HEADER)
        given = answer.get(proto.SERVER_PROOF_HEADER)
        if (
            status != 200
            or answer.get(proto.AUTH_HEADER) != proto.AUTH_SCHEME
            or not proto.valid_nonce(server_nonce)
            or server_nonce == nonce
            or not proto.proof_ok(
                proto.proof(self.token, proto.HUB_PROOF_LABEL, nonce, server_nonce or ""), given
            )
        ):
            raise NotOurHub(
                f"the listener at {self.base} is not your hub: it did not prove it knows the token "
                f"({self.token_source}); nothing was sent to it"
            )
        assert server_nonce is not None
        mine = proto.proof(self.token, proto.APP_PROOF_LABEL, nonce, server_nonce)
        return {"Authorization": f"Graphmind-Proof {nonce} {server_nonce} {mine}"}

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """(status, JSON body) of one call; NotOurHub or Unreachable (one line each)."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        extra = {"Content-Type": "application/json"} if data else {}
        extra.update(headers or {})
        for attempt in (1, 2):
            if self.token is not None and self._auth is None:
                self._auth = self._prove()
            status, raw, _ = self._send(method, path, data, {**(self._auth or {}), **extra}, timeout)
            if status == 401 and self._auth is not None and attempt == 1:
                self._auth = None  # the hub restarted or forgot the pair: prove again, once
                continue
            try:
                return status, json.loads(raw or b"null")
            except ValueError:
                return status, {"error": f"{status} without JSON"}
        raise AssertionError("unreachable")

    def _send(
        self, method: str, path: str, data: bytes | None, headers: dict[str, str], timeout: float | None
    ) -> tuple[int, bytes, dict[str, str]]:
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with self._opener.open(request, timeout=timeout or self.timeout) as response:
                return response.status, response.read(), {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as exc:
            try:
                return exc.code, exc.read(), {k.lower(): v for k, v in exc.headers.items()}
            finally:
                exc.close()
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise Unreachable(f"no hub answers at {self.base} ({getattr(exc, 'reason', exc)})") from None


def token_source(port: int, token_file: str | None) -> str:
    """Where `protocol.find_token` found the token, for NotOurHub's line (its order)."""
    if token_file:
        return f"--token-file {token_file}"
    if os.environ.get(proto.TOKEN_ENV, "").strip():
        return proto.TOKEN_ENV
    if os.environ.get(proto.TOKEN_FILE_ENV, "").strip():
        return f"{proto.TOKEN_FILE_ENV}={os.environ[proto.TOKEN_FILE_ENV].strip()}"
    return (
        f"the token file {proto.token_file(port)}, which a hub that did not stop cleanly leaves behind: "
        "delete it if the hub on this port has no token"
    )
