"""The whole node around one streamed call, for adapters whose stream reaches the app item by item
(a generator the framework iterates) and so cannot be one `run_sync` call.

Before gate: inject hands the app one converted item and the stream is never opened. After gate:
only when it would hold at the start (a breakpoint, step mode) is the stream buffered, so that it
can be replaced (inject) or run again (retry); otherwise items pass straight through and the node
finishes when the stream ends. Error gate: retry and inject only while nothing has reached the app.
A stream closed early (or its task cancelled) still finishes its node, marked `cutShort`.

As in `_call_loop.py`, `stream_flow` decides every step once; `stream_sync` and `stream_async`
only call or await what it asks and hand the app what it emits.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator
from typing import Any, TypeVar

from . import protocol as proto
from ._call_loop import GATE, Request
from ._errors import RunAborted
from ._execution import NodeRecord
from ._node import describe_error

T = TypeVar("T")
Describe = Callable[[list[Any]], tuple[Any, "dict[str, Any] | None"]]

# (OPEN,) -> the stream; (NEXT, it) -> its next item or END; (EMIT, item): hand it to the app.
OPEN, NEXT, EMIT = "open", "next", "emit"
END: Any = object()
_OPEN: Request = (OPEN,)


def _identity(value: Any) -> Any:
    return value


def _next(it: Iterator[T]) -> T:
    return next(it)


async def _anext(it: AsyncIterator[T]) -> T:
    return await it.__anext__()


def _describe_items(items: list[Any]) -> tuple[Any, dict[str, Any] | None]:
    return items, None


def stream_flow(
    node: NodeRecord, describe: Describe, on_item: Callable[[Any], None] | None
) -> Generator[Request, Any, None]:
    """Every decision of a node around one streamed call (a gate that cannot hold is passed here)."""
    if node.may_hold():
        answer = yield (GATE, proto.BEFORE, {"input": node.spec.input})
        if answer.action == proto.INJECT:
            node.finish(answer.raw)
            yield (EMIT, answer.value)
            return
    while True:
        buffered = node.wants_hold(proto.AFTER)
        items: list[Any] = []
        sent = False
        try:
            it = yield _OPEN
            while True:
                with node.active():
                    item = yield (NEXT, it)
                if item is END:
                    break
                if on_item is not None:
                    on_item(item)
                items.append(item)
                if not buffered:
                    sent = True
                    yield (EMIT, item)
        except RunAborted as exc:
            node.fail(exc)
            raise
        except Exception as exc:
            if sent or not node.may_hold():  # part of the stream reached the app: nothing can be taken back
                node.fail(exc)
                raise
            answer = yield (GATE, proto.ERROR_GATE, {"input": node.spec.input, "error": describe_error(exc)})
            if answer.action == proto.RETRY:
                continue
            if answer.action == proto.INJECT:
                node.finish(answer.raw)
                yield (EMIT, answer.value)
                return
            node.fail(exc)
            raise
        except (
            BaseException
        ):  # closed early (GeneratorExit), its task cancelled (asyncio or trio), interrupted
            output, usage = describe(items)
            node.finish(output, usage=usage, cut_short=True)
            raise
        output, usage = describe(items)
        if buffered:
            answer = yield (GATE, proto.AFTER, {"input": node.spec.input, "output": output})
            if answer.action == proto.RETRY:
                continue
            if answer.action == proto.INJECT:
                node.finish(answer.raw)
                yield (EMIT, answer.value)
                return
        node.finish(output, usage=usage)
        if buffered:
            for item in items:
                yield (EMIT, item)
        return


def stream_sync(
    node: NodeRecord,
    open_stream: Callable[[], Iterator[T]],
    *,
    advance: Callable[[Iterator[T]], T] = _next,
    on_item: Callable[[T], None] | None = None,
    describe: Describe = _describe_items,
    from_injected: Callable[[Any], T] = _identity,
) -> Generator[T, None, None]:
    """Drives `stream_flow` from sync code; iterate the result in place of the stream."""
    flow = stream_flow(node, describe, on_item)
    try:
        request = next(flow)
        while True:
            try:
                if request[0] is EMIT:
                    yield request[1]
                    reply: Any = None
                elif request[0] is NEXT:
                    try:
                        reply = advance(request[1])
                    except StopIteration:
                        reply = END
                elif request[0] is OPEN:
                    reply = open_stream()
                else:
                    reply = node.gate(request[1], request[2], from_injected)
            except BaseException as exc:  # GeneratorExit: the app closed the stream
                request = flow.throw(exc)
            else:
                request = flow.send(reply)
    except StopIteration:
        return


async def stream_async(
    node: NodeRecord,
    open_stream: Callable[[], AsyncIterator[T]],
    *,
    advance: Callable[[AsyncIterator[T]], Awaitable[T]] = _anext,
    on_item: Callable[[T], None] | None = None,
    describe: Describe = _describe_items,
    from_injected: Callable[[Any], T] = _identity,
) -> AsyncGenerator[T, None]:
    """Drives `stream_flow` from async code: `advance` raises StopAsyncIteration at the end, and a
    cancelled task finishes the node as cut short too."""
    flow = stream_flow(node, describe, on_item)
    try:
        request = next(flow)
        while True:
            try:
                if request[0] is EMIT:
                    yield request[1]
                    reply: Any = None
                elif request[0] is NEXT:
                    try:
                        reply = await advance(request[1])
                    except StopAsyncIteration:
                        reply = END
                elif request[0] is OPEN:
                    reply = open_stream()
                else:
                    reply = await node.agate(request[1], request[2], from_injected)
            except BaseException as exc:  # GeneratorExit (closed early) or CancelledError
                request = flow.throw(exc)
            else:
                request = flow.send(reply)
    except StopIteration:
        return
