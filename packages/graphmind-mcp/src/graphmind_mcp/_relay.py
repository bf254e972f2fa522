"""What passes between the host and the real server besides requests: notifications and the end.

- `HostChannel` remembers the host connection (from any request it sends, `initialize` included) and
  forwards the server's notifications to it: list changes, resource updates, log messages.
  Progress is relayed per call (the tools/call handler passes a progress callback).
- `WatchedStream` wraps the read side of the server's stdio, so the proxy knows when the server
  closed its stdout (it exited or crashed) even when no request is waiting.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import anyio
from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession

# Server notifications a host receives through the proxy as the server sent them. Progress is not here:
# it belongs to one request and is relayed by that request's handler; cancellation is applied by the SDK.
FORWARDED = (
    types.ToolListChangedNotification,
    types.ResourceListChangedNotification,
    types.PromptListChangedNotification,
    types.ResourceUpdatedNotification,
    types.LoggingMessageNotification,
)


class HostChannel:
    def __init__(self) -> None:
        self.session: ServerSession | None = None
        self.forwarded = 0

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        # mcp/server/context.py ServerMiddleware: sees every inbound request, `initialize` included.
        self.session = ctx.session
        return await call_next(ctx)

    async def on_server_message(self, message: Any) -> None:
        """`ClientSession(message_handler=...)`: a notification (or a transport error) from the server."""
        session = self.session
        if session is None or not isinstance(message, FORWARDED):
            return
        self.forwarded += 1
        # No related request id: the connection's own channel (mcp/server/session.py ServerSession._notify).
        await session.send_notification(message)


class WatchedStream:
    """A read stream that sets `closed` when it ends (the server's stdout reached EOF)."""

    def __init__(self, inner: Any, closed: anyio.Event) -> None:
        self._inner = inner
        self._closed = closed

    def __getattr__(self, name: str) -> Any:  # `last_context` and anything else the dispatcher reads
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._closed.set()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError):
            self._closed.set()
            raise

    async def __aenter__(self) -> WatchedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        self._closed.set()
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)
