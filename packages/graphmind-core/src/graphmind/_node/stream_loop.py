"""The whole node around one streamed call, for adapters whose stream reaches the app item by item
(a generator the framework iterates) and so cannot be one `run_sync` call.

Before gate: inject hands the app the converted item (or each of an `Items`) and the stream is never
opened. After gate:
only when it would hold at the start (a breakpoint, step mode) is the stream buffered, so that it
can be replaced (inject) or run again (retry); otherwise items pass straight through and the node
finishes when the stream ends. Error gate: retry and inject only while nothing has reached the app.
A stream closed early (or its task cancelled) still finishes its node, marked `cutShort`, and the
stream it opened is closed (`close()` / `aclose()`, when it has one) so its cleanup runs at once. A
run aborted while the stream runs stops it before its next item (`RunAborted`). With `mark_chunks`
(streaming tools, the AI SDK page) every ending the loop writes carries `streaming: true` and
`chunks`: how many items the node's output holds (the stream's, or the injected ones).

As in `call_loop.py`, `stream_flow` decides every step once; `StreamLoop.stream_sync` and
`stream_async` (methods of every `NodeExecution`, engine.py) only call or await what it asks and
hand the app what it emits.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from .. import protocol as proto
from .._base.errors import RunAborted
from .._hub.gate import GateAnswer
from .record import GATE, NodeRecord, Request
from .spec import Owned, describe_error

T = TypeVar("T")
Describe = Callable[[list[Any]], tuple[Any, "dict[str, Any] | None"]]

# (OPEN,) -> the stream; (NEXT, it) -> its next item or END; (EMIT, item): hand it to the app.
OPEN, NEXT, EMIT = "open", "next", "emit"
END: Any = object()
_OPEN: Request = (OPEN,)


@dataclass(frozen=True, slots=True)
class Items:
    """What a `from_injected` returns when one injected value stands for several items (a streaming
    tool's injected list: one chunk per element); the app gets each, in order. Any other converted
    value is one item."""

    values: tuple[Any, ...]


def _identity(value: Any) -> Any:
    return value


# The default `advance`: the builtin itself (a Python function around it was a frame per item).
_next: Callable[[Iterator[Any]], Any] = next


def _anext(it: AsyncIterator[T]) -> Awaitable[T]:
    """The default async `advance`: the iterator's own awaitable (an `async def` around it was a
    coroutine per item)."""
    return it.__anext__()


def _describe_items(items: list[Any]) -> tuple[Any, dict[str, Any] | None]:
    return items, None


def _injected(
    node: NodeRecord, answer: GateAnswer, marks: Callable[[int], dict[str, Any]]
) -> Generator[Request, Any, None]:
    """Finishes a node answered by an inject, then hands the app what it stands for."""
    values = answer.value.values if isinstance(answer.value, Items) else (answer.value,)
    node.finish(answer.raw, **marks(len(values)))
    for value in values:
        yield (EMIT, value)


def stream_flow(
    node: NodeRecord, describe: Describe, on_item: Callable[[Any], None] | None, mark_chunks: bool = False
) -> Generator[Request, Any, None]:
    """Every decision of a node around one streamed call (a gate that cannot hold is passed here)."""

    opening: Request = _OPEN  # (OPEN, open_stream) once an edit or reload decided a new one

    def marks(count: int) -> dict[str, Any]:
        return {"streaming": True, "chunks": count} if mark_chunks else {}

    if node.host.replay is not None or node.may_hold():  # a replay answers here too (docs/replay.md)
        answer = yield (GATE, proto.BEFORE, {"input": node.spec.input})
        if answer.injects:
            yield from _injected(node, answer, marks)
            return
        if answer.body is not None:
            opening = (OPEN, answer.body)
    run, current = node.run, node.host.current_node
    while True:
        buffered = node.wants_hold(proto.AFTER)
        items: list[Any] = []
        sent = False
        try:
            it = yield opening
            while True:
                if run._aborted:  # aborted from the debugger while streaming: stop before the next item
                    raise RunAborted(run.run_id)
                token = current.set(node.instance_id)  # nodes the stream starts are this node's children
                try:
                    item = yield (NEXT, it)
                finally:
                    current.reset(token)
                if item is END:
                    break
                if on_item is not None:
                    on_item(item)
                items.append(item)
                if not buffered:
                    sent = True
                    yield (EMIT, item)
        except RunAborted as exc:
            node.fail(exc, **marks(len(items)))
            raise
        except Exception as exc:
            if sent or not node.may_hold():  # part of the stream reached the app: nothing can be taken back
                node.fail(exc, **marks(len(items)))
                raise
            answer = yield (GATE, proto.ERROR_GATE, {"input": node.spec.input, "error": describe_error(exc)})
            if answer.retries:
                if answer.body is not None:
                    opening = (OPEN, answer.body)
                continue
            if answer.injects:
                yield from _injected(node, answer, marks)
                return
            node.fail(exc, **marks(len(items)))
            raise
        except (
            BaseException
        ):  # closed early (GeneratorExit), its task cancelled (asyncio or trio), interrupted
            described = describe(items)
            output, usage = described
            node.finish(
                output, usage=usage, cut_short=True, owned=type(described) is Owned, **marks(len(items))
            )
            raise
        # an `Owned` answer: the adapter built output and usage fresh, of json_scalar leaves
        described = describe(items)
        output, usage = described
        if buffered:
            answer = yield (GATE, proto.AFTER, {"input": node.spec.input, "output": output})
            if answer.retries:
                if answer.body is not None:
                    opening = (OPEN, answer.body)
                continue
            if answer.injects:
                yield from _injected(node, answer, marks)
                return
        node.finish(output, usage=usage, owned=type(described) is Owned, **marks(len(items)))
        if buffered:
            for item in items:
                yield (EMIT, item)
        return


class StreamLoop(NodeRecord):
    """A node's loop around a stream the app reads item by item (`NodeExecution` has it)."""

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
        gives the node's (output, usage) from the items seen (an `Owned` tuple when the adapter
        built both fresh, of `json_scalar` leaves: recorded without the pipeline's copy);
        `from_injected` makes the item the app gets from an injected JSON value (or an `Items` of
        several). `mark_chunks` (streaming tools)
        adds `streaming: true` and `chunks` to the node's ending. A stream the node stops reading
        before its end (closed early, aborted) is closed.
        """
        flow = stream_flow(self, describe, on_item, mark_chunks)
        opened: Any = None  # the stream being read, until it ends: closed if the node ends first
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
                            opened = None
                    elif request[0] is OPEN:
                        if len(request) > 1:
                            open_stream = request[1]
                        reply = opened = open_stream()
                    else:
                        reply = self.gate(request[1], request[2], from_injected)
                except BaseException as exc:  # GeneratorExit: the app closed the stream
                    request = flow.throw(exc)
                else:
                    request = flow.send(reply)
        except StopIteration:
            return
        finally:
            close = getattr(opened, "close", None)
            if close is not None:  # cut short, aborted or failed: the stream's own cleanup runs now
                close()

    async def stream_async(
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
        flow = stream_flow(self, describe, on_item, mark_chunks)
        opened: Any = None  # the stream being read, until it ends: closed if the node ends first
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
                            opened = None
                    elif request[0] is OPEN:
                        if len(request) > 1:
                            open_stream = request[1]
                        reply = opened = open_stream()
                    else:
                        reply = await self.agate(request[1], request[2], from_injected)
                except BaseException as exc:  # GeneratorExit (closed early) or CancelledError
                    request = flow.throw(exc)
                else:
                    request = flow.send(reply)
        except StopIteration:
            return
        finally:
            aclose = getattr(opened, "aclose", None)
            if aclose is not None:  # cut short, aborted or failed: the stream's own cleanup runs now
                await aclose()
