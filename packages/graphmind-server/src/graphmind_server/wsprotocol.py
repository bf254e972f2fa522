"""uvicorn's WebSocket protocol, plus a way to cut a connection that stopped reading.

An asyncio transport whose peer never reads keeps its write buffer until TCP gives up, which on
Linux is never; `close()` waits for that buffer to drain. The live feed (live.py) needs to free a
stuck viewer at a deadline, so each WebSocket scope gets `extensions["graphmind.abort"]`, which
aborts the transport. At shutdown a connection that has not closed within SHUTDOWN_ABORT_S is cut
too, so Ctrl-C never waits on a viewer that stopped reading.

It extends uvicorn's sans-I/O implementation (uvicorn/protocols/websockets/websockets_sansio_impl.py,
`handle_connect` builds `self.scope`; `shutdown` sends 1012): `protocol_class()` falls back to
uvicorn's default ("auto") when that class is not there, and the feed then closes normally.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from typing import Any

SHUTDOWN_ABORT_S = 0.5
# After refusing a frame (over ws_max_size: 1009), keep reading and dropping what the peer still
# sends for this long before closing: closing with unread bytes makes the kernel reset the
# connection, and a reset can discard the close frame before the peer reads its code.
REFUSED_LINGER_S = 2.0
ABORT_EXTENSION = "graphmind.abort"


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


def protocol_class(limiter: Any = None) -> Any:
    """`limiter` (limits.Limiter) hears when an upgraded connection ends: the HTTP protocol that
    reported its start is not told once uvicorn hands the transport to this one."""
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    except ImportError:  # pragma: no cover - another uvicorn layout
        return "auto"

    class Protocol(WebSocketsSansIOProtocol):
        def handle_connect(self, event: Any) -> None:
            super().handle_connect(event)
            scope = getattr(self, "scope", None)
            if isinstance(scope, dict):
                scope.setdefault("extensions", {})[ABORT_EXTENSION] = self._abort

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
            logger = self.logger
            self.logger = _OneLineLogger(logger, self)  # type: ignore[assignment]
            try:
                super().send_receive_event_to_app()
            finally:
                self.logger = logger

    return Protocol
