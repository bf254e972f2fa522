"""Opening one connection to the hub: the bound connect, the token, hello and welcome.

The transport (`_transport.py`) owns the thread, the ring and the state; this module only turns a
URL into an attached WebSocket and its `welcome`, or None with at most one warning. Everything it
uses from `websockets` and `socket` is bound when the `HubLink` is built (issue 18: an app that
later patches `websockets.sync.client.connect` never receives GraphMind's connections).

Two budgets (environment page: connectTimeoutMs 300, handshakeTimeoutMs 1000): `connect_timeout`
bounds the TCP connect (`_tcp.py`), `handshake_timeout` everything after it, the upgrade and the
hub's `welcome` together. A hub on this machine is always reached directly; elsewhere, a proxy
from the environment (websockets >= 15 reads HTTPS_PROXY / NO_PROXY) opens the socket itself, and
then the two budgets are one (`connect_timeout + handshake_timeout`), as websockets has only one.

websockets is imported when this module is (so with `import graphmind`), unless the kill switch
is on then: its import costs 50-70 ms here (bench/first_call.py), which the app's first call
would pay otherwise, since a Client is often built on first use (`graphmind.get_client()`).
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
from urllib.parse import urlsplit

from .. import protocol as proto
from .._base.warn import Warner
from .._config.options import Options, is_enabled
from .._hub.attach_wait import is_loopback_url
from .tcp import TcpConnector, host_and_port

if is_enabled(None, os.environ):  # a process that starts disabled never loads websockets
    import websockets.sync.client  # noqa: F401  (the cost at import, not on the first call)

_log = logging.getLogger("graphmind.transport")
CLOSE_TIMEOUT_S = 1.0  # the closing handshake after a complete flush
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


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
    """GRAPHMIND_TOKEN, else the token file a hub on this loopback port wrote (docs/security.md)."""
    env = os.environ if environ is None else environ
    token = env.get(proto.TOKEN_ENV, "").strip()
    if token:
        return token
    try:
        parts = urlsplit(url)
        port, host = parts.port, parts.hostname
    except ValueError:
        return None
    if host not in _LOOPBACK or port is None:
        return None
    try:
        return proto.token_file(port, env).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


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
        self._direct = is_loopback_url(options.url) or not self._uses_proxy(options.url)
        self._clock = time.monotonic
        self.encode = proto.encode
        self.decode = proto.decode
        self._options = options
        self._client_id = client_id
        self._warn = warn

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
        """(an attached WebSocket, the hub's welcome), or None: no hub, refused, or another protocol."""
        opts = self._options
        token = find_token(opts.url)
        sock = None
        if self._direct:
            try:
                host, port = host_and_port(opts.url)
                sock = self._tcp.connect(host, port, opts.connect_timeout)
            except Exception as exc:  # refused, unreachable, or no answer within connect_timeout
                _log.debug("graphmind: no hub at %s (%r)", opts.url, exc)
                return None
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
                max_size=None,
                compression=None,
                user_agent_header=f"graphmind-python/{opts.sdk.get('version', '')}",
                additional_headers={"Authorization": f"Bearer {token}"} if token else None,
                logger=self._ws_log,
                **self._legacy,
            )
        except Exception as exc:
            if sock is not None:
                with contextlib.suppress(Exception):
                    sock.close()
            if token is None and "401" in str(exc):
                self._warn(
                    f"[graphmind] the hub at {opts.url} requires a token; running detached. "
                    f"Set {proto.TOKEN_ENV} (graphmind serve prints it) or run the app as the hub's user.",
                    key="token",
                )
            _log.debug("graphmind: no hub at %s (%r)", opts.url, exc)
            return None
        try:
            hello = proto.hello(
                app=opts.app, sdk=opts.sdk, pid=os.getpid(), client_id=self._client_id, meta=opts.meta
            )
            ws.send(self.encode(hello))
            welcome = self.decode(ws.recv(timeout=max(0.0, deadline - self._clock())))
            refusal = self._refusal(welcome)
        except Exception as exc:
            _log.debug("graphmind: handshake with %s failed (%r)", opts.url, exc)
            welcome, refusal = None, ""
        if welcome is None or refusal is not None:
            if refusal:
                self._warn(refusal, key="handshake")
            # Cut, not a closing handshake: a hub that sent no welcome in time would make close()
            # wait another CLOSE_TIMEOUT_S for its close frame.
            with contextlib.suppress(Exception):
                ws.socket.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(Exception):
                ws.close()
            return None
        return ws, welcome

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
