"""`NodeExecution`: one node's events and gates (`_execution.NodeRecord`) plus the loops around a
call (`_call_loop.py`) or a stream (`_stream_loop.py`). Adapters get it from `Engine.start_node`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator
from typing import Any, TypeVar

from .call_loop import run_async, run_sync
from .record import NodeRecord
from .spec import Settled
from .stream_loop import Describe, _anext, _describe_items, _next, stream_async, stream_sync

T = TypeVar("T")


def _identity(value: Any) -> Any:
    return value


class NodeExecution(NodeRecord):
    """One execution of one node: `NodeRecord`'s events and gates, and the loops around a call."""

    def run_sync(
        self,
        call: Callable[[], T],
        describe_output: Callable[[Any], Any] = _identity,
        from_injected: Callable[[Any], Any] = _identity,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None = None,
        settle: Callable[[Any], Settled] | None = None,
    ) -> T:
        """Runs `call` as this node: before gate, body, error or after gate, retry, inject, abort.

        `settle` (optional) is called with each result of `call`, outside the node's context,
        before the after gate; its `Settled` says what the after gate sees and what the app gets.
        Without it, `describe_output` / `describe_usage` describe the result and the app gets the
        result itself. A `from_injected` that returns a `Settled` finishes an injected node with
        its description and hands the app its `result`.
        """
        describe = None if describe_output is _identity else describe_output  # None: no call per node
        return run_sync(self, call, describe, from_injected, describe_usage, settle)

    async def run_async(
        self,
        call: Callable[[], Awaitable[T]],
        describe_output: Callable[[Any], Any] = _identity,
        from_injected: Callable[[Any], Any] = _identity,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None = None,
        settle: Callable[[Any], Awaitable[Settled]] | None = None,
    ) -> T:
        """`run_sync` from async code; here `settle` is a coroutine function (it may read a body)."""
        describe = None if describe_output is _identity else describe_output
        return await run_async(self, call, describe, from_injected, describe_usage, settle)

    def stream_sync(
        self,
        open_stream: Callable[[], Iterator[T]],
        *,
        advance: Callable[[Iterator[T]], T] = _next,
        on_item: Callable[[T], None] | None = None,
        describe: Describe = _describe_items,
        from_injected: Callable[[Any], Any] = _identity,
        mark_chunks: bool = False,
    ) -> Generator[T, None, None]:
        """Runs a streamed call as this node; iterate the result in place of the stream.

        `open_stream()` starts the call (again on retry); `advance(it)` takes the next item (it
        raises StopIteration at the end; an adapter passes its own to set context around the
        framework's code); `on_item` sees each item as it comes (to emit `token`s); `describe(items)`
        gives the node's (output, usage) from the items seen; `from_injected` makes the item the app
        gets from an injected JSON value (or an `Items` of several). `mark_chunks` (streaming tools)
        adds `streaming: true` and `chunks` to the node's ending. A stream the node stops reading
        before its end (closed early, aborted) is closed.
        """
        return stream_sync(
            self,
            open_stream,
            advance=advance,
            on_item=on_item,
            describe=describe,
            from_injected=from_injected,
            mark_chunks=mark_chunks,
        )

    def stream_async(
        self,
        open_stream: Callable[[], AsyncIterator[T]],
        *,
        advance: Callable[[AsyncIterator[T]], Awaitable[T]] = _anext,
        on_item: Callable[[T], None] | None = None,
        describe: Describe = _describe_items,
        from_injected: Callable[[Any], Any] = _identity,
        mark_chunks: bool = False,
    ) -> AsyncGenerator[T, None]:
        """`stream_sync` from async code: `advance` raises StopAsyncIteration at the end, and a
        cancelled task finishes the node as cut short too."""
        return stream_async(
            self,
            open_stream,
            advance=advance,
            on_item=on_item,
            describe=describe,
            from_injected=from_injected,
            mark_chunks=mark_chunks,
        )
