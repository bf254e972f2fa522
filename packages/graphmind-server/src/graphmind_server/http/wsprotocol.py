"""uvicorn's WebSocket protocol, plus a way to cut a connection that stopped reading.

An asyncio transport whose peer never reads keeps its write buffer until TCP gives up, which on
Linux is never; `close()` waits for that buffer to drain. The live feed (http/live.py) needs to free a
stuck viewer at a deadline, so each WebSocket scope gets `extensions["graphmind.abort"]`, which
aborts the transport. At shutdown a connection that has not closed within SHUTDOWN_ABORT_S is cut
too, so Ctrl-C never waits on a viewer that stopped reading.

It extends uvicorn's sans-I/O implementation (uvicorn/protocols/websockets/websockets_sansio_impl.py,
`handle_connect` builds `self.scope`; `shutdown` sends 1012): `protocol_class()` falls back to
uvicorn's default ("auto") when that class is not there, and the feed then closes normally.

An upgrade the hub refuses with an HTTP answer (no token: 401, a foreign Origin: 403) made uvicorn
log "ASGI callable returned without completing handshake." each time (`run_asgi`): another user
could write 300 lines a second into the hub's log. Those are counted instead: the first refusal is
one line, the rest one summary line per REFUSALS_EVERY_S.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

SHUTDOWN_ABORT_S = 0.5
# After refusing a frame (over ws_max_size: 1009), keep reading and dropping what the peer still
# sends for this long before closing: closing with unread bytes makes the kernel reset the
# connection, and a reset can discard the close frame before the peer reads its code.
REFUSED_LINGER_S = 2.0
ABORT_EXTENSION = "graphmind.abort"
# `extensions["graphmind.peek"](see)`: `see(parts)` is called with each text message's bytes as the
# message is read from the socket, before it waits in the connection's queue for the app's task: the
# gate lane reads a held gate ahead of the bulk frames other connections queued (ingest/lane.py).
# `peek(None)` stops it (the app's task is done with this connection).
PEEK_EXTENSION = "graphmind.peek"
REFUSALS_EVERY_S = 30.0
# uvicorn/protocols/websockets/websockets_sansio_impl.py `run_asgi`, after an HTTP refusal.
NO_HANDSHAKE = "ASGI callable returned without completing handshake."


class Refusals:
    """Upgrades refused with an HTTP status: the first said at once, the rest summed up."""

    def __init__(self, every: float = REFUSALS_EVERY_S) -> None:
        self.every = every
        self.total = 0
        self._pending: Counter[int] = Counter()
        self._timer: asyncio.TimerHandle | None = None

    def refused(self, status: int, peer: str) -> None:
        self.total += 1
        if self._timer is None:
            _say(
                f"refused a WebSocket upgrade from {peer} with HTTP {status} ({_WHY.get(status, 'refused')}); "
                f"more refusals are summed up every {self.every:.0f} s"
            )
            self._timer = asyncio.get_running_loop().call_later(self.every, self._summary)
            return
        self._pending[status] += 1

    def flush(self) -> None:
        """At shutdown: the summary of what the interval had not said yet."""
        if self._timer is not None:
            self._timer.cancel()
        self._summary()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _summary(self) -> None:
        if not self._pending:
            self._timer = None  # quiet for a whole interval: the next refusal is said at once
            return
        n = sum(self._pending.values())
        by = ", ".join(f"{count} with HTTP {status}" for status, count in sorted(self._pending.items()))
        _say(f"refused {n} more WebSocket upgrade(s) in the last {self.every:.0f} s ({by})")
        self._pending.clear()
        self._timer = asyncio.get_running_loop().call_later(self.every, self._summary)


_WHY = {401: "no valid token", 403: "a foreign Origin or Host"}


def _say(message: str) -> None:
    print(f"graphmind: {message}", file=sys.stderr, flush=True)


class _RefusalLogger:
    """uvicorn's logger during `run_asgi`: its line after an HTTP refusal goes to `Refusals`."""

    def __init__(self, logger: Any, protocol: Any, refusals: Refusals) -> None:
        self._logger = logger
        self._protocol = protocol
        self._refusals = refusals

    def error(self, message: str, *args: Any, **kwargs: Any) -> None:
        answer = getattr(self._protocol, "initial_response", None)
        if message == NO_HANDSHAKE and answer is not None:
            client = getattr(self._protocol, "client", None)
            peer = client[0] if isinstance(client, tuple) and client else "a client"
            self._refusals.refused(int(answer[0]), str(peer))
            return
        self._logger.error(message, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)


class _OneLineLogger:
    """uvicorn's logger, whose `exception` logs one line (no traceback) naming the peer."""

    def __init__(self, logger: Any, protocol: Any) -> None:
        self._logger = logger
        self._protocol = protocol

    def exception(self, message: str, *args: Any, **kwargs: Any) -> None:
        client = getattr(self._protocol, "client", None)
        peer = f"{client[0]}:{client[1]}" if isinstance(client, tuple) and len(client) == 2 else "a client"
        what = message % args if args else message  # uvicorn's only use: "Invalid UTF-8 sequence …"
        self._logger.warning(
            "graphmind: %s (from %s); closed that connection with 1007", what.rstrip("."), peer
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)


def protocol_class(limiter: Any = None, refusals: Refusals | None = None) -> Any:
    """`limiter` (limits.Limiter) hears when an upgraded connection ends: the HTTP protocol that
    reported its start is not told once uvicorn hands the transport to this one. `refusals` counts
    the upgrades refused with an HTTP answer."""
    refusals = refusals if refusals is not None else Refusals()
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    except ImportError:  # pragma: no cover - another uvicorn layout
        return "auto"

    class Protocol(WebSocketsSansIOProtocol):
        def handle_connect(self, event: Any) -> None:
            super().handle_connect(event)
            scope = getattr(self, "scope", None)
            if isinstance(scope, dict):
                extensions = scope.setdefault("extensions", {})
                extensions[ABORT_EXTENSION] = self._abort
                extensions[PEEK_EXTENSION] = self._set_peek

        _graphmind_peek: Callable[[list[bytes]], None] | None = None

        def _set_peek(self, see: Callable[[list[bytes]], None] | None) -> None:
            self._graphmind_peek = see

        def _abort(self) -> None:
            transport = self.transport
            if transport is None or (transport.is_closing() and self.disconnected):
                return
            # Linger 0: the kernel resets the connection instead of keeping the unsent bytes of an
            # orphaned socket for a peer that never reads (its memory, and the peer's view of it).
            sock = transport.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()

        def data_received(self, data: bytes) -> None:
            if getattr(self, "_graphmind_refused", False):
                return  # the refused frame's rest: dropped, never buffered
            super().data_received(data)

        def handle_parser_exception(self) -> None:
            # uvicorn's own writes the close frame and closes at once (see REFUSED_LINGER_S).
            if getattr(self, "_graphmind_refused", False):
                return
            self._graphmind_refused = True
            close = self.conn.close_sent
            code, reason = (close.code, close.reason) if close is not None else (1002, "")
            self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.close_sent = True
            if getattr(self, "read_paused", False):  # keep draining: paused, the peer would block
                self.read_paused = False
                self.transport.resume_reading()
            # As a close the app asks for: run_asgi leaves the closing to this timer when it is set.
            self.close_timer = self.loop.call_later(REFUSED_LINGER_S, self.transport.close)

        async def run_asgi(self) -> None:
            logger = self.logger
            self.logger = _RefusalLogger(logger, self, refusals)  # type: ignore[assignment, arg-type]
            try:
                await super().run_asgi()
            finally:
                self.logger = logger

        def connection_lost(self, exc: Exception | None) -> None:
            if limiter is not None:
                limiter.closed(self.transport)
            super().connection_lost(exc)

        def shutdown(self) -> None:
            super().shutdown()
            self.loop.call_later(SHUTDOWN_ABORT_S, self._abort)

        def send_receive_event_to_app(self) -> None:
            # uvicorn logs a text frame that is not UTF-8 with logger.exception (a traceback in the
            # hub's log for one bad client frame); it still closes with 1007, we log one line.
            see = self._graphmind_peek
            if see is not None and self.curr_msg_data_type == "text" and not self.close_sent:
                see(self.frames)  # the message's parts, as read
            logger = self.logger
            self.logger = _OneLineLogger(logger, self)  # type: ignore[assignment]
            try:
                super().send_receive_event_to_app()
            finally:
                self.logger = logger

    Protocol.refusals = refusals  # type: ignore[attr-defined]  # flushed at shutdown (serve.py)
    return Protocol
