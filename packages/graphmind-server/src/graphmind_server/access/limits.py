"""Connections that have not proved themselves cannot starve the hub (issue 28, docs/security.md).

Every accepted connection is *pending* until a request on it shows the token (access/guard.py calls
`trust`; on `/ingest`, the proof handshake does), or, on a hub without a token, until its first
request's headers are complete. A pending connection:

- is closed `HANDSHAKE_TIMEOUT_S` after it was accepted: headers trickled byte by byte, a socket
  that never sends, an `/ingest` upgrade that never proves itself, all end there;
- counts against `MAX_PENDING_PER_PEER` (per address) and `MAX_PENDING` (overall), and against the
  file descriptors the process may open (`RLIMIT_NOFILE` minus `RESERVED_FDS`). A new connection
  over a bound closes the *oldest* pending one (of its own address first), never itself: a flood
  of idle sockets keeps at most the bound open, and the token holder's next connection is accepted
  and proves itself within a millisecond, long before the flood could push it out.

Trusted connections are not counted here: they are the token holder's (or, without a token,
anyone's: docs/security.md says that loopback without a token trusts every local user).

asyncio accepts up to its server's `backlog` connections per wake-up; serve.py keeps that batch
small (`ACCEPT_BATCH`) and the kernel's listen queue large, so the descriptors in use never run
ahead of the evictions. An `accept()` that fails anyway (EMFILE) is one line per
`LOG_INTERVAL_S`, never a traceback per attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import socket
import struct
import sys
import time
from collections import OrderedDict
from typing import Any

HANDSHAKE_TIMEOUT_S = 5.0
MAX_PENDING = 256
MAX_PENDING_PER_PEER = 128
RESERVED_FDS = 128  # the store's files, the token holder's connections, a batch being accepted
ACCEPT_BATCH = 32
LISTEN_QUEUE = 2048
LOG_INTERVAL_S = 10.0
ACCEPT_FAILED = "socket.accept() out of system resource"

Key = tuple[str, int]


def peer_key(transport: asyncio.BaseTransport) -> Key | None:
    peer = transport.get_extra_info("peername")
    if isinstance(peer, (tuple, list)) and len(peer) >= 2:
        return (str(peer[0]), int(peer[1]))
    return None


def _cut(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None:  # a reset, not a FIN the peer could ignore while we keep the buffer
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(Exception):
        transport.abort()  # type: ignore[attr-defined]


class Limiter:
    def __init__(self) -> None:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        self.fd_budget = max(16, (soft if soft != resource.RLIM_INFINITY else 65536) - RESERVED_FDS)
        self.max_pending = min(MAX_PENDING, max(8, self.fd_budget // 2))
        self.pending: OrderedDict[Key, tuple[asyncio.BaseTransport, asyncio.TimerHandle]] = OrderedDict()
        self.per_peer: dict[str, OrderedDict[Key, None]] = {}
        self.trusted: set[Key] = set()
        self.evicted = 0
        self.expired = 0
        self._accept_failures = 0
        self._last_log: dict[str, float] = {}

    # ---- from the protocols (serve.py) --------------------------------------------------------
    def opened(self, transport: asyncio.BaseTransport) -> None:
        key = peer_key(transport)
        if key is None:
            return
        while self._over(key[0]):
            if not self._evict_one(key[0]):
                break
        loop = asyncio.get_running_loop()
        timer = loop.call_later(HANDSHAKE_TIMEOUT_S, self._expire, key)
        self.pending[key] = (transport, timer)
        self.per_peer.setdefault(key[0], OrderedDict())[key] = None

    def closed(self, transport: asyncio.BaseTransport | None) -> None:
        key = peer_key(transport) if transport is not None else None
        if key is None:
            return
        self.trusted.discard(key)
        self._forget(key)

    # ---- from the app (access/guard.py, ingest/route.py) ------------------------------------------------
    def trust(self, client: Any) -> None:
        if not isinstance(client, (tuple, list)) or len(client) < 2:
            return
        key = (str(client[0]), int(client[1]))
        if key in self.pending:
            self._forget(key)
            self.trusted.add(key)

    # ---- the loop's exception handler (serve.py) ----------------------------------------------
    def accept_failed(self, exc: BaseException | None) -> None:
        self._accept_failures += 1
        if self._due("accept"):
            self._say(
                f"cannot accept connections ({exc!r}): {self._accept_failures} failed accept(s) so far; "
                f"{len(self.pending)} connection(s) waiting to prove themselves, {len(self.trusted)} trusted. "
                "Raise the open-files limit (ulimit -n) if this hub has that many real clients"
            )

    # ---- internals ----------------------------------------------------------------------------
    def _over(self, host: str) -> bool:
        return (
            len(self.per_peer.get(host, ())) >= MAX_PENDING_PER_PEER
            or len(self.pending) >= self.max_pending
            or len(self.pending) + len(self.trusted) >= self.fd_budget
        )

    def _evict_one(self, host: str) -> bool:
        own = self.per_peer.get(host)
        if own and len(own) >= MAX_PENDING_PER_PEER:
            key = next(iter(own))
        elif self.pending:
            busiest = max(self.per_peer.values(), key=len)  # the address holding the most
            key = next(iter(busiest))
        else:
            return False
        transport, _ = self.pending[key]
        self._forget(key)
        _cut(transport)
        self.evicted += 1
        if self._due("evict"):
            self._say(
                f"closed {self.evicted} connection(s) so far that had not shown the token while over the bound "
                f"of {self.max_pending} waiting ({MAX_PENDING_PER_PEER} per address); a flood of idle "
                "connections? (docs/security.md)"
            )
        return True

    def _expire(self, key: Key) -> None:
        entry = self.pending.get(key)
        if entry is None:
            return
        self._forget(key)
        self.expired += 1
        _cut(entry[0])

    def _forget(self, key: Key) -> None:
        entry = self.pending.pop(key, None)
        if entry is None:
            return
        entry[1].cancel()
        own = self.per_peer.get(key[0])
        if own is not None:
            own.pop(key, None)
            if not own:
                del self.per_peer[key[0]]

    def _due(self, what: str) -> bool:
        now = time.monotonic()
        last = self._last_log.get(what)
        if last is not None and now - last < LOG_INTERVAL_S:
            return False
        self._last_log[what] = now
        return True

    @staticmethod
    def _say(message: str) -> None:
        print(f"graphmind: {message}", file=sys.stderr, flush=True)


def http_protocol_class(limiter: Limiter) -> Any:
    """uvicorn's HTTP protocol, reporting each connection's start and end to the limiter."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class Protocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            limiter.opened(transport)

        def connection_lost(self, exc: Exception | None) -> None:
            limiter.closed(getattr(self, "transport", None))
            super().connection_lost(exc)

    return Protocol


def install_accept_handler(loop: asyncio.AbstractEventLoop, limiter: Limiter) -> None:
    """A failed accept() becomes one line per interval (asyncio logs a traceback per attempt)."""
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == ACCEPT_FAILED:
            limiter.accept_failed(context.get("exception"))
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
