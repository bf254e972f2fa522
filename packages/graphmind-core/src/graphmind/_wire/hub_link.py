"""Opening one connection to the hub: the bound connect, the proof handshake, hello and welcome.

With a token (found by `protocol.find_token`) the app never sends it: the upgrade carries a fresh
nonce, the hub must answer with an HMAC over it that only a holder of the token can make, and only
then does the hello go out, with the app's own proof (docs/protocol.md, "Authentication"). A
listener that cannot prove it (a squatter on the port) gets nothing more and one warning says so.
Hub frames are capped at `protocol.HUB_MAX_FRAME` (websockets refuses a bigger one at its header).

The transport (`_wire/transport.py`) owns the thread, the ring and the state; this module only turns a
URL into an attached WebSocket and its `welcome`, or None with at most one warning. Everything it
uses from `websockets` and `socket` is bound when the `HubLink` is built (issue 18: an app that
later patches `websockets.sync.client.connect` never receives GraphMind's connections).

Two budgets (environment page: connectTimeoutMs 300, handshakeTimeoutMs 1000): `connect_timeout`
bounds the TCP connect (`_wire/tcp.py`), `handshake_timeout` everything after it, the upgrade and the
hub's `welcome` together. A hub on this machine is always reached directly; elsewhere, a proxy
from the environment (websockets >= 15 reads HTTPS_PROXY / NO_PROXY) opens the socket itself, and
then the two budgets are one (`connect_timeout + handshake_timeout`), as websockets has only one.

websockets is imported when the first `HubLink` is built (a client that will connect: issue 37),
not with `import graphmind`: its import costs ~30 ms idle (50-70 ms loaded, bench/first_call.py),
which every script and test process paid before, detached or not. `graphmind.adapter` preloads it
(`preload`, when enabled): an adapter's first call often builds the client (`get_client()` on first
use), and that call must not pay the import (issue 18, langchain-core's timed first stream). A
process that starts with the kill switch on never loads it.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import socket
import sys
import time
from collections.abc import Mapping
from typing import Any

from .. import protocol as proto
from .._base.warn import Warner
from .._config.options import Options, is_enabled
from .._hub.attach_wait import is_loopback_url
from .tcp import TcpConnector, host_and_port

_log = logging.getLogger("graphmind.transport")


def preload() -> None:
    """Imports websockets now, unless the process starts disabled (see the module docstring)."""
    if is_enabled(None, os.environ):
        import websockets.sync.client  # noqa: F401  (the cost now, not on an adapter's first call)


CLOSE_TIMEOUT_S = 1.0  # the closing handshake after a complete flush
# Keepalive: a ping every PING_INTERVAL_S, and a hub that has not answered one within PING_TIMEOUT_S
# is gone (SIGSTOPped, a stalled machine): the connection is cut and held gates continue, as for a
# disconnect. So a frozen hub holds a call at most PING_INTERVAL_S + PING_TIMEOUT_S + CLOSE_TIMEOUT_S
# (6 s; docs/timeouts.md), not websockets' default 20 + 20 s.
PING_INTERVAL_S = 2.0
PING_TIMEOUT_S = 3.0


class OneLineLog(logging.LoggerAdapter[logging.Logger]):
    """websockets' own logger, minus tracebacks: a frozen hub's "keepalive ping failed" is one debug line."""

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        if kwargs.pop("exc_info", None):
            exc = sys.exc_info()[1]
            msg = f"{msg} ({exc!r})" if exc is not None else msg
        kwargs.pop("stack_info", None)
        self.logger.log(min(level, logging.DEBUG), msg, *args, **kwargs)

    def isEnabledFor(self, level: int) -> bool:
        return self.logger.isEnabledFor(logging.DEBUG)


def find_token(url: str, environ: Mapping[str, str] | None = None) -> str | None:
    """GRAPHMIND_TOKEN, GRAPHMIND_TOKEN_FILE, else the token file a hub on this loopback port wrote
    (`protocol.find_token`, the one helper every command uses too; docs/security.md)."""
    return proto.find_token(url, environ)


class HubLink:
    def __init__(self, options: Options, client_id: str, warn: Warner) -> None:
        from websockets.sync.client import connect  # bound now, never looked up again

        self._connect: Any = connect
        params = inspect.signature(connect).parameters
        takes_any = any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
        )  # a wrapper around it
        # websockets >= 17 warns unless direct (non-`with`) use is declared; older versions lack the flag.
        self._legacy: dict[str, Any] = {"legacy": True} if "legacy" in params or takes_any else {}
        self._ws_log = OneLineLog(logging.getLogger("graphmind.transport.websockets"), {})
        self._tcp = TcpConnector()
        self.hello_extra: dict[str, Any] = {}  # fields the client adds to its hello (`safe`)
        self._loopback = is_loopback_url(options.url)
        self._direct = self._loopback or not self._uses_proxy(options.url)
        self._clock = time.monotonic
        self.encode = proto.encode
        self.decode = proto.decode
        self._options = options
        self._client_id = client_id
        self._warn = warn
        # Some attempt reached a listening port: a client that never attached then says so at
        # close (a hub was there and the handshake failed), not when no hub was ever running.
        self.reached = False
        self.last_reached = False  # the last attempt did (its handshake failed after the connect)

    @staticmethod
    def _uses_proxy(url: str) -> bool:
        """Whether websockets would take this URL through a proxy from the environment (>= 15 only)."""
        try:
            from websockets.proxy import get_proxy
            from websockets.uri import parse_uri

            return get_proxy(parse_uri(url)) is not None
        except Exception:  # websockets < 15 has no proxy support: always direct
            return False

    def open(self) -> tuple[Any, dict[str, Any]] | None:
        """(an attached WebSocket, the hub's welcome), or None: no hub, refused, or another protocol.

        With a token, nothing but the upgrade request (with a fresh nonce) goes out until the
        listener has proved in its 101 answer that it knows the token (docs/protocol.md,
        "Authentication"); then the hello carries the app's own proof. The token itself never
        leaves the process."""
        opts = self._options
        self.last_reached = False
        try:
            token = find_token(opts.url)
        except proto.TokenError as exc:
            self._warn(f"[graphmind] {exc}; running detached.", key="token-file")
            return None
        client_nonce = proto.new_nonce() if token else ""
        sock = None
        if self._direct:
            try:
                host, port = host_and_port(opts.url)
                sock = self._tcp.connect(host, port, opts.connect_timeout)
            except Exception as exc:  # refused, unreachable, or no answer within connect_timeout
                _log.debug("graphmind: no hub at %s (%r)", opts.url, exc)
                # On loopback only a refusal says "no hub": a connect that timed out there is a
                # busy hub, or this thread waiting its turn at the GIL among 200 (issue 29).
                if self._loopback and not isinstance(exc, ConnectionRefusedError):
                    self.last_reached = True
                return None
            self.reached = self.last_reached = True
            budget = opts.handshake_timeout
        else:
            budget = (
                opts.connect_timeout + opts.handshake_timeout
            )  # websockets opens the socket via the proxy
        deadline = self._clock() + budget
        try:
            ws = self._connect(
                opts.url,
                sock=sock,
                open_timeout=budget,
                close_timeout=CLOSE_TIMEOUT_S,
                ping_interval=PING_INTERVAL_S,
                ping_timeout=PING_TIMEOUT_S,
                # Hub frames are control frames: one over this is refused at its header, never
                # buffered (websockets' parser checks the length first), and the connection closed 1009.
                max_size=proto.HUB_MAX_FRAME,
                compression=None,
                user_agent_header=f"graphmind-python/{opts.sdk.get('version', '')}",
                additional_headers=(
                    {proto.AUTH_HEADER: proto.AUTH_SCHEME, proto.CLIENT_NONCE_HEADER: client_nonce}
                    if token
                    else None
                ),
                logger=self._ws_log,
                **self._legacy,
            )
        except Exception as exc:
            if sock is not None:
                with contextlib.suppress(Exception):
                    sock.close()
            self._refused_upgrade(exc, token is not None)
            return None
        hub_proof = ""
        if token:
            hub_proof = self._hub_proof(ws, token, client_nonce)
            if not hub_proof:
                self._warn(
                    f"[graphmind] the listener at {opts.url} is not your hub: it did not prove it knows the token "
                    f"({self._token_source()}); running detached and sending it nothing.",
                    key="not-our-hub",
                )
                self._cut(ws)
                return None
        try:
            hello = proto.hello(
                app=opts.app, sdk=opts.sdk, pid=os.getpid(), client_id=self._client_id, meta=opts.meta
            )
            hello.update(self.hello_extra)  # `safe` (docs/protocol.md, "Effects and safe mode")
            if token:
                hello["auth"] = {"scheme": proto.AUTH_SCHEME, "proof": hub_proof}
            ws.send(self.encode(hello))
            welcome = self.decode(ws.recv(timeout=max(0.0, deadline - self._clock())))
            refusal = self._refusal(welcome)
        except Exception as exc:
            _log.debug("graphmind: handshake with %s failed (%r)", opts.url, exc)
            welcome, refusal = None, ""
        if welcome is None or refusal is not None:
            if refusal:
                self._warn(refusal, key="handshake")
            self._cut(ws)
            return None
        return ws, welcome

    def _token_source(self) -> str:
        """Where the token came from, for the one warning line (find_token's order)."""
        env = os.environ
        if env.get(proto.TOKEN_ENV, "").strip():
            return proto.TOKEN_ENV
        if env.get(proto.TOKEN_FILE_ENV, "").strip():
            return f"{proto.TOKEN_FILE_ENV}={env[proto.TOKEN_FILE_ENV].strip()}"
        try:
            _, port = host_and_port(self._options.url)
        except ValueError:
            return "the hub's token file"
        return (
            f"the token file {proto.token_file(port)}, which a hub that did not stop cleanly leaves behind: "
            "delete it if the hub on this port has no token"
        )

    def _hub_proof(self, ws: Any, token: str, client_nonce: str) -> str:
        """The app's proof for the hello when the 101 answer carries the hub's valid proof, else ""."""
        try:
            headers = ws.response.headers
            scheme = headers.get(proto.AUTH_HEADER)
            server_nonce = headers.get(proto.SERVER_NONCE_HEADER)
            given = headers.get(proto.SERVER_PROOF_HEADER)
        except Exception:
            return ""
        if scheme != proto.AUTH_SCHEME or not proto.valid_nonce(server_nonce) or server_nonce == client_nonce:
            return ""
        expected = proto.proof(token, proto.HUB_PROOF_LABEL, client_nonce, server_nonce)
        if not proto.proof_ok(expected, given):
            return ""
        return proto.proof(token, proto.APP_PROOF_LABEL, client_nonce, server_nonce)

    def _refused_upgrade(self, exc: Exception, with_token: bool) -> None:
        url = self._options.url
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status is not None and with_token:
            self._warn(
                f"[graphmind] the listener at {url} answered {status} to the token handshake: it is not your hub, "
                "or a graphmind-server too old to prove it knows the token (upgrade it); running detached.",
                key="not-our-hub",
            )
        elif status == 401:
            self._warn(
                f"[graphmind] the hub at {url} requires a token; running detached. "
                f"Set {proto.TOKEN_ENV} (graphmind serve prints it) or run the app as the hub's user.",
                key="token",
            )
        _log.debug("graphmind: no hub at %s (%r)", url, exc)

    @staticmethod
    def _cut(ws: Any) -> None:
        # Cut, not a closing handshake: a listener that sent no welcome in time would make close()
        # wait another CLOSE_TIMEOUT_S for its close frame.
        with contextlib.suppress(Exception):
            ws.socket.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(Exception):
            ws.close()

    def _refusal(self, welcome: dict[str, Any] | None) -> str | None:
        url = self._options.url
        if welcome is None or welcome.get("type") != proto.WELCOME:
            code = welcome.get("code") if welcome else None
            return (
                f"[graphmind] the hub at {url} refused the handshake ({code or 'no welcome'}); running detached. "
                "Check that graphmind-server and graphmind-core versions match."
            )
        if welcome.get("protocol") not in proto.SUPPORTED_PROTOCOLS:
            return (
                f"[graphmind] the hub at {url} chose protocol {welcome.get('protocol')!r}, which this SDK does not "
                "speak; running detached. Upgrade graphmind-core."
            )
        return None


QUICK_RETRY_S = 0.1  # after losing an attached hub: retry this often…
QUICK_WINDOW_S = 10.0  # …for this long, then back off (doubling) to retry_interval


def retry_delay(lost_at: float | None, failures: int, retry_interval: float) -> float:
    """How long the transport waits before its next connect attempt (transport.py's docstring)."""
    if lost_at is None:
        return retry_interval  # a hub that was never there
    if time.monotonic() - lost_at < QUICK_WINDOW_S:
        return QUICK_RETRY_S
    doublings = min(30, max(0, failures - int(QUICK_WINDOW_S / QUICK_RETRY_S)))  # capped: no overflow
    return min(retry_interval, 0.5 * 2.0**doublings)
