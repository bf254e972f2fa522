"""One case of the gate matrix at work: its hub, client, subject and instrumented thing."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from .. import protocol as proto
from .._api.client import Client
from ._fakehub import Answer
from ._subject import GateSubject, Hub

T = TypeVar("T")


class Case:
    """One case's hub, client, subject and instrumented thing."""

    def __init__(self, hub: Hub, client: Client, subject: GateSubject) -> None:
        self.hub = hub
        self.client = client
        self.subject = subject
        self.thing = subject.instrument(subject.make(), client)
        self.node_id = subject.node_id

    def break_on(self, gate: str, *answers: Answer) -> None:
        """A breakpoint on the subject's node at `gate`, answered with `answers` in order (then continue)."""
        pending = list(answers)
        self.hub.auto_answer(lambda _frame: pending.pop(0) if pending else (proto.CONTINUE, None))
        self.hub.set_debug(breakpoints=[(self.node_id, gate)])

    def events(self, event_type: str) -> list[dict[str, Any]]:
        return [e for e in self.hub.of_type(event_type) if e.get("nodeId") == self.node_id]

    async def wait_node_end(self) -> dict[str, Any]:
        """The node's ending, waited for in a worker thread: the event loop keeps running meanwhile
        (an async stream closed early may finish its node from a task the loop runs later)."""
        return await in_thread(
            self.hub.wait_event,
            lambda e: (
                e.get("nodeId") == self.node_id and e.get("type") in (proto.NODE_FINISHED, proto.NODE_ERROR)
            ),
        )

    async def settled(self) -> None:
        """Everything the client emitted so far has reached the hub (events arrive in order)."""
        with self.client.span("gate-matrix-marker"):
            pass
        await in_thread(
            self.hub.wait_event,
            lambda e: e.get("type") == proto.NODE_FINISHED and e.get("name") == "gate-matrix-marker",
        )

    async def call(self, is_async: bool) -> Any:
        return await self.subject.acall(self.thing) if is_async else self.subject.call(self.thing)

    def resumed_actions(self) -> list[str]:
        return [e["action"] for e in self.events(proto.EXEC_RESUMED)]


async def in_thread(fn: Callable[..., T], *args: Any) -> T:
    # anyio: the same wait under asyncio and trio (the kit's async cases run under both)
    import anyio.to_thread

    return await anyio.to_thread.run_sync(functools.partial(fn, *args))


async def astream_items(subject: GateSubject, thing: Any, limit: int | None = None) -> tuple[list[Any], Any]:
    stream = subject.astream(thing)
    if isinstance(stream, Awaitable):
        stream = await stream
    items: list[Any] = []
    iterator: AsyncIterator[Any] = stream.__aiter__()
    async for item in take(iterator, limit):
        items.append(item)
    return items, stream


async def take(iterator: AsyncIterator[Any], limit: int | None) -> AsyncIterator[Any]:
    count = 0
    while limit is None or count < limit:
        try:
            item = await iterator.__anext__()
        except StopAsyncIteration:
            return
        count += 1
        yield item
