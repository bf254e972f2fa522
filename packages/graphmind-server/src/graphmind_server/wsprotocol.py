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


def protocol_class() -> Any:
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
