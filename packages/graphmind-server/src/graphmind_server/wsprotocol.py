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

        def connection_lost(self, exc: Exception | None) -> None:
            if limiter is not None:
                limiter.closed(self.transport)
            super().connection_lost(exc)

        def shutdown(self) -> None:
            super().shutdown()
            self.loop.call_later(SHUTDOWN_ABORT_S, self._abort)

    return Protocol
