"""The whole node around one streamed call, for adapters whose stream reaches the app item by item
(a generator the framework iterates) and so cannot be one `run_sync` call.

Before gate: inject hands the app one converted item and the stream is never opened. After gate:
only when it would hold at the start (a breakpoint, step mode) is the stream buffered, so that it
can be replaced (inject) or run again (retry); otherwise items pass straight through and the node
finishes when the stream ends. Error gate: retry and inject only while nothing has reached the app.
A stream closed early (or its task cancelled) still finishes its node, marked `cutShort`.

Mixed into `NodeExecution`, beside `CallLoop`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

from . import protocol as proto
from ._call_loop import NodeSurface
from ._errors import RunAborted

T = TypeVar("T")
Describe = Callable[[list[Any]], tuple[Any, "dict[str, Any] | None"]]


def _identity(value: Any) -> Any:
    return value


def _next(it: Iterator[T]) -> T:
    return next(it)


async def _anext(it: AsyncIterator[T]) -> T:
    return await it.__anext__()


def _describe_items(items: list[Any]) -> tuple[Any, dict[str, Any] | None]:
    return items, None


class StreamLoop(NodeSurface):
    def stream_sync(
        self,
        open_stream: Callable[[], Iterator[T]],
        *,
        advance: Callable[[Iterator[T]], T] = _next,
        on_item: Callable[[T], None] | None = None,
        describe: Describe = _describe_items,
        from_injected: Callable[[Any], T] = _identity,
    ) -> Iterator[T]:
        """Runs a streamed call as this node; iterate the result in place of the stream.

        `open_stream()` starts the call (again on retry); `advance(it)` takes the next item (it
        raises StopIteration at the end; an adapter passes its own to set context around the
        framework's code); `on_item` sees each item as it comes (to emit `token`s); `describe(items)`
        gives the node's (output, usage) from the items seen; `from_injected` makes the item the app
        gets from an injected JSON value.
        """
        answer = self.before(from_injected)
        if answer.action == proto.INJECT:
            self.finish(answer.raw)
            yield answer.value
            return
        while True:
            buffered = self.wants_hold(proto.AFTER)
            items: list[T] = []
            sent = False
            try:
                it = open_stream()
                while True:
                    with self.active():
                        try:
                            item = advance(it)
                        except StopIteration:
                            break
                    if on_item is not None:
                        on_item(item)
                    items.append(item)
                    if not buffered:
                        sent = True
                        yield item
            except GeneratorExit:  # the app closed the stream early
                output, usage = describe(items)
                self.finish(output, usage=usage, cut_short=True)
                raise
            except RunAborted as exc:
                self.fail(exc)
                raise
            except Exception as exc:
                if sent:  # part of the stream reached the app: nothing can be taken back
                    self.fail(exc)
                    raise
                answer = self.error(exc, from_injected)
                if answer.action == proto.RETRY:
                    continue
                if answer.action == proto.INJECT:
                    self.finish(answer.raw)
                    yield answer.value
                    return
                self.fail(exc)
                raise
            output, usage = describe(items)
            if buffered:
                answer = self.after(output, from_injected)
                if answer.action == proto.RETRY:
                    continue
                if answer.action == proto.INJECT:
                    self.finish(answer.raw)
                    yield answer.value
                    return
            self.finish(output, usage=usage)
            if buffered:
                yield from items
            return

    async def stream_async(
        self,
        open_stream: Callable[[], AsyncIterator[T]],
        *,
        advance: Callable[[AsyncIterator[T]], Awaitable[T]] = _anext,
        on_item: Callable[[T], None] | None = None,
        describe: Describe = _describe_items,
        from_injected: Callable[[Any], T] = _identity,
    ) -> AsyncIterator[T]:
        """`stream_sync` from asyncio code: `advance` raises StopAsyncIteration at the end, and a
        cancelled task finishes the node as cut short too."""
        answer = await self.abefore(from_injected)
        if answer.action == proto.INJECT:
            self.finish(answer.raw)
            yield answer.value
            return
        while True:
            buffered = self.wants_hold(proto.AFTER)
            items: list[T] = []
            sent = False
            try:
                it = open_stream()
                while True:
                    with self.active():
                        try:
                            item = await advance(it)
                        except StopAsyncIteration:
                            break
                    if on_item is not None:
                        on_item(item)
                    items.append(item)
                    if not buffered:
                        sent = True
                        yield item
            except (GeneratorExit, asyncio.CancelledError):  # closed early, or its task cancelled
                output, usage = describe(items)
                self.finish(output, usage=usage, cut_short=True)
                raise
            except RunAborted as exc:
                self.fail(exc)
                raise
            except Exception as exc:
                if sent:
                    self.fail(exc)
                    raise
                answer = await self.aerror(exc, from_injected)
                if answer.action == proto.RETRY:
                    continue
                if answer.action == proto.INJECT:
                    self.finish(answer.raw)
                    yield answer.value
                    return
                self.fail(exc)
                raise
            output, usage = describe(items)
            if buffered:
                answer = await self.aafter(output, from_injected)
                if answer.action == proto.RETRY:
                    continue
                if answer.action == proto.INJECT:
                    self.finish(answer.raw)
                    yield answer.value
                    return
            self.finish(output, usage=usage)
            if buffered:
                for item in items:
                    yield item
            return
