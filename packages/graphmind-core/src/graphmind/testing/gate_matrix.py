"""The gate matrix every adapter passes, run with the adapter's own call (docs/adapters.md).

    from graphmind.testing.gate_matrix import CASES, GateSubject, run_case

    class OpenAISubject(GateSubject):
        node_id = "llm:step"
        ...                                   # how to build, call, fail and count the real thing

    @pytest.mark.parametrize("case", CASES)
    async def test_gate_matrix(case: str) -> None:
        await run_case(case, OpenAISubject())

Each case starts a hub (core's in-process `FakeHub` by default; any object with its methods works,
e.g. a driver over the real hub process), a client attached to it, and one fresh instrumented
thing from the subject, checks one line of the matrix and tears everything down. Holds are
answered by the hub as soon as they are seen (`auto_answer`), so no case sleeps to synchronise.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

from .. import protocol as proto
from .._client import Client
from .._errors import RunAborted
from ._fakehub import Answer, FakeHub

T = TypeVar("T")


class Hub(Protocol):
    """What a case needs of a hub (FakeHub has it)."""

    events: list[dict[str, Any]]

    @property
    def url(self) -> str: ...
    def set_debug(
        self,
        *,
        breakpoints: Iterable[tuple[str, str]] | None = ...,
        mode: str | None = ...,
        pause_on_error: str | None = ...,
        wait_ack: bool = ...,
    ) -> None: ...
    def auto_answer(
        self, action: str | Callable[[dict[str, Any]], Answer | None] | None, value: Any = None
    ) -> None: ...
    def resolve(self, gate_id: str, action: str, value: Any = None) -> None: ...
    def of_type(self, event_type: str) -> list[dict[str, Any]]: ...
    def wait_for(self, predicate: Callable[[], bool], timeout: float = ..., what: str = ...) -> None: ...
    def wait_event(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = ...
    ) -> dict[str, Any]: ...
    def __enter__(self) -> Hub: ...
    def __exit__(self, *exc: object) -> None: ...


class GateSubject:
    """What an adapter tells the kit about its call. Override every method the matrix reaches.

    `real_calls` counts the attempts that reached the real thing (the provider, the tool body),
    failed ones included. `fail_next()` makes the next attempt fail once, with an error the
    framework does not retry by itself; `raised` is then the exception object the real call
    raised, when the subject can see it (the kit checks the app gets that very object), else None.
    """

    node_id: str = "llm:step"  # the node to break on
    injected: Any = "from the debugger"  # a JSON value a person injects at this node
    error_type: type[BaseException] = Exception  # what `fail_next` makes the call raise
    streams: bool = False  # True: `stream` / `astream` are implemented
    raised: BaseException | None = None

    @property
    def real_calls(self) -> int:
        raise NotImplementedError

    def make(self) -> Any:
        """A fresh, bare (uninstrumented) framework object."""
        raise NotImplementedError

    def instrument(self, thing: Any, session: Client) -> Any:
        """The adapter's instrument call (it returns the instrumented thing)."""
        raise NotImplementedError

    def undo(self, thing: Any) -> Any:
        """The adapter's undo call."""
        raise NotImplementedError

    def call(self, thing: Any) -> Any:
        """One sync call as an app makes it; returns what the app gets."""
        raise NotImplementedError

    async def acall(self, thing: Any) -> Any:
        """One async call as an app makes it."""
        raise NotImplementedError

    def stream(self, thing: Any) -> Iterable[Any]:
        """A streamed sync call of more than one item; the kit iterates it and may close it early."""
        raise NotImplementedError

    def astream(self, thing: Any) -> Any:
        """A streamed async call (an async iterable, or an awaitable of one)."""
        raise NotImplementedError

    def fail_next(self) -> None:
        raise NotImplementedError

    def check_real(self, result: Any) -> None:
        """Asserts `result` is the real call's result, of the framework's own type."""

    def check_injected(self, result: Any, value: Any) -> None:
        """Asserts the app got the framework's own type carrying the injected `value`."""

    def check_stream(self, items: list[Any]) -> None:
        """Asserts the app got the real stream's items, of the framework's own types."""


CASES: list[str] = []
_CASES: dict[str, Callable[[_Case], Awaitable[None]]] = {}


def _case(fn: Callable[[_Case], Awaitable[None]]) -> Callable[[_Case], Awaitable[None]]:
    CASES.append(fn.__name__)
    _CASES[fn.__name__] = fn
    return fn


class _Case:
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
        return await _in_thread(
            self.hub.wait_event,
            lambda e: (
                e.get("nodeId") == self.node_id and e.get("type") in (proto.NODE_FINISHED, proto.NODE_ERROR)
            ),
        )

    async def settled(self) -> None:
        """Everything the client emitted so far has reached the hub (events arrive in order)."""
        with self.client.span("gate-matrix-marker"):
            pass
        await _in_thread(
            self.hub.wait_event,
            lambda e: e.get("type") == proto.NODE_FINISHED and e.get("name") == "gate-matrix-marker",
        )

    async def call(self, is_async: bool) -> Any:
        return await self.subject.acall(self.thing) if is_async else self.subject.call(self.thing)

    def resumed_actions(self) -> list[str]:
        return [e["action"] for e in self.events(proto.EXEC_RESUMED)]


async def _in_thread(fn: Callable[..., T], *args: Any) -> T:
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


async def _astream_items(subject: GateSubject, thing: Any, limit: int | None = None) -> tuple[list[Any], Any]:
    stream = subject.astream(thing)
    if isinstance(stream, Awaitable):
        stream = await stream
    items: list[Any] = []
    iterator: AsyncIterator[Any] = stream.__aiter__()
    async for item in _take(iterator, limit):
        items.append(item)
    return items, stream


async def _take(iterator: AsyncIterator[Any], limit: int | None) -> AsyncIterator[Any]:
    count = 0
    while limit is None or count < limit:
        try:
            item = await iterator.__anext__()
        except StopAsyncIteration:
            return
        count += 1
        yield item


# ---- the cases -------------------------------------------------------------------------------------


async def _before_inject(c: _Case, is_async: bool) -> None:
    c.break_on(proto.BEFORE, (proto.INJECT, c.subject.injected))
    result = await c.call(is_async)
    c.subject.check_injected(result, c.subject.injected)
    assert c.subject.real_calls == 0, "a before-inject must not reach the real thing"
    end = await c.wait_node_end()
    assert end["type"] == proto.NODE_FINISHED and end.get("injected") is True


@_case
async def before_inject(c: _Case) -> None:
    await _before_inject(c, False)


@_case
async def before_inject_async(c: _Case) -> None:
    await _before_inject(c, True)


async def _after_inject(c: _Case, is_async: bool) -> None:
    c.break_on(proto.AFTER, (proto.INJECT, c.subject.injected))
    result = await c.call(is_async)
    c.subject.check_injected(result, c.subject.injected)
    assert c.subject.real_calls == 1
    assert (await c.wait_node_end()).get("injected") is True


@_case
async def after_inject(c: _Case) -> None:
    await _after_inject(c, False)


@_case
async def after_inject_async(c: _Case) -> None:
    await _after_inject(c, True)


async def _after_retry(c: _Case, is_async: bool) -> None:
    c.break_on(proto.AFTER, (proto.RETRY, None), (proto.CONTINUE, None))
    result = await c.call(is_async)
    c.subject.check_real(result)
    assert c.subject.real_calls == 2, (
        f"retry at the after gate runs the call again (real calls: {c.subject.real_calls})"
    )
    await c.wait_node_end()
    assert c.resumed_actions() == [proto.RETRY, proto.CONTINUE]


@_case
async def after_retry(c: _Case) -> None:
    await _after_retry(c, False)


@_case
async def after_retry_async(c: _Case) -> None:
    await _after_retry(c, True)


async def _error_retry(c: _Case, is_async: bool) -> None:
    c.break_on(proto.ERROR_GATE, (proto.RETRY, None))
    c.subject.fail_next()
    result = await c.call(is_async)
    c.subject.check_real(result)
    assert c.subject.real_calls == 2
    assert (await c.wait_node_end())["type"] == proto.NODE_FINISHED
    assert c.resumed_actions() == [proto.RETRY]


@_case
async def error_retry(c: _Case) -> None:
    await _error_retry(c, False)


@_case
async def error_retry_async(c: _Case) -> None:
    await _error_retry(c, True)


async def _error_continue(c: _Case, is_async: bool) -> None:
    c.break_on(proto.ERROR_GATE, (proto.CONTINUE, None))
    c.subject.fail_next()
    try:
        await c.call(is_async)
    except c.subject.error_type as exc:
        if c.subject.raised is not None:
            assert exc is c.subject.raised, (
                "continue at the error gate re-raises the original exception object"
            )
    else:
        raise AssertionError("continue at the error gate must re-raise the call's error")
    assert c.subject.real_calls == 1
    assert (await c.wait_node_end())["type"] == proto.NODE_ERROR
    assert c.resumed_actions() == [proto.CONTINUE]


@_case
async def error_continue(c: _Case) -> None:
    await _error_continue(c, False)


@_case
async def error_continue_async(c: _Case) -> None:
    await _error_continue(c, True)


async def _abort(c: _Case, is_async: bool) -> None:
    c.break_on(proto.BEFORE, (proto.ABORT, None))
    with c.client.run("gate-matrix") as run:
        for _ in range(2):  # the second call in the aborted run raises at once, without a hold
            try:
                await c.call(is_async)
            except RunAborted as exc:
                assert exc.run_id == run.run_id
            else:
                raise AssertionError("abort must raise RunAborted out of the call")
        assert run.aborted
    assert c.subject.real_calls == 0
    await c.settled()
    assert len(c.events(proto.EXEC_PAUSED)) == 1


@_case
async def abort(c: _Case) -> None:
    await _abort(c, False)


@_case
async def abort_async(c: _Case) -> None:
    await _abort(c, True)


async def _stream_items(c: _Case, is_async: bool, limit: int | None) -> list[Any]:
    if is_async:
        items, stream = await _astream_items(c.subject, c.thing, limit)
        if limit is not None:
            closer = getattr(stream, "aclose", None) or getattr(stream, "close", None)
            if closer is not None:
                done = closer()
                if isinstance(done, Awaitable):
                    await done
        return items
    stream = c.subject.stream(c.thing)
    iterator: Iterator[Any] = iter(stream)
    items = []
    for item in iterator:
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    if limit is not None:
        closer = getattr(stream, "close", None) or getattr(iterator, "close", None)
        if closer is not None:
            closer()
    return items


async def _stream_tee(c: _Case, is_async: bool) -> None:
    if not c.subject.streams:
        return
    items = await _stream_items(c, is_async, None)
    c.subject.check_stream(items)
    end = await c.wait_node_end()
    assert end["type"] == proto.NODE_FINISHED and not end.get("cutShort"), end
    assert end.get("output") is not None
    assert c.subject.real_calls == 1


@_case
async def stream_tee(c: _Case) -> None:
    await _stream_tee(c, False)


@_case
async def stream_tee_async(c: _Case) -> None:
    await _stream_tee(c, True)


async def _stream_cut_short(c: _Case, is_async: bool) -> None:
    if not c.subject.streams:
        return
    items = await _stream_items(c, is_async, 1)
    assert len(items) == 1
    end = await c.wait_node_end()
    assert end["type"] == proto.NODE_FINISHED and end.get("cutShort") is True, end


@_case
async def stream_cut_short(c: _Case) -> None:
    await _stream_cut_short(c, False)


@_case
async def stream_cut_short_async(c: _Case) -> None:
    await _stream_cut_short(c, True)


@_case
async def twenty_async_holds(c: _Case) -> None:
    """20 calls held at once on one event loop: the loop keeps ticking, each is answered on its own."""
    c.hub.set_debug(breakpoints=[(c.node_id, proto.BEFORE)])
    ticks = 0
    stop = False

    async def ticker() -> None:
        nonlocal ticks
        while not stop:
            ticks += 1
            await asyncio.sleep(0)

    tick_task = asyncio.ensure_future(ticker())
    calls = [asyncio.ensure_future(c.subject.acall(c.thing)) for _ in range(20)]
    try:
        while len(c.events(proto.EXEC_PAUSED)) < 20:
            if any(call.done() for call in calls):
                raise AssertionError("a held call returned before it was answered")
            await asyncio.sleep(0.005)  # yields to the loop while the hub receives the holds
        held_ticks = ticks
        await asyncio.sleep(0.01)
        assert ticks > held_ticks, "the event loop must keep running while 20 calls are held"
        assert not any(call.done() for call in calls)
        for paused in c.events(proto.EXEC_PAUSED):
            c.hub.resolve(paused["gateId"], proto.CONTINUE)
        results = await asyncio.gather(*calls)
    finally:
        stop = True
        await tick_task
    for result in results:
        c.subject.check_real(result)
    assert c.subject.real_calls == 20


@_case
async def wrap_twice_is_once(c: _Case) -> None:
    again = c.subject.instrument(c.thing, c.client)
    c.subject.check_real(c.subject.call(again))
    await c.settled()
    assert len(c.events(proto.NODE_STARTED)) == 1, "instrumenting twice must give one node per call"


@_case
async def undo(c: _Case) -> None:
    bare = c.subject.undo(c.thing)
    c.subject.check_real(c.subject.call(bare))
    c.subject.check_real(await c.subject.acall(bare))
    await c.settled()
    assert c.events(proto.NODE_STARTED) == [], "an undone thing makes no node"
    assert c.subject.real_calls == 2


@_case
async def disabled(c: _Case) -> None:
    """Disabled GraphMind: instrument returns the very object, starts no thread, the call is real."""
    before = set(threading.enumerate())
    client = Client(app="gate-matrix-disabled", url=c.hub.url, enabled=False)
    try:
        bare = c.subject.make()
        assert c.subject.instrument(bare, client) is bare
        c.subject.check_real(c.subject.call(bare))
        c.subject.check_real(await c.subject.acall(bare))
        started = [t.name for t in set(threading.enumerate()) - before if t.name.startswith("graphmind")]
        assert started == [], f"a disabled client started threads: {started}"
    finally:
        client.dispose()
    # The default session under GRAPHMIND_DISABLED=1 (environment page: the adapter's wrappers are
    # identity functions): nothing is patched, not even a marker attribute (issue 16 item 3).
    with _kill_switch():
        bare = c.subject.make()
        attrs = _attrs(bare)
        assert c.subject.instrument(bare, None) is bare  # type: ignore[arg-type]  # None: the default session
        assert _attrs(bare) == attrs, "GRAPHMIND_DISABLED=1 with the default session still patched the object"
        c.subject.check_real(c.subject.call(bare))
        c.subject.check_real(await c.subject.acall(bare))


def _attrs(thing: Any) -> list[list[str] | None]:
    """Instance attribute names of the thing and of what it holds (a subject may make a pair of clients)."""
    objects = [thing, *(thing if isinstance(thing, tuple) else ())]
    with contextlib.suppress(TypeError):
        objects += list(vars(thing).values())
    return [sorted(vars(obj)) if hasattr(obj, "__dict__") else None for obj in objects]


@contextlib.contextmanager
def _kill_switch() -> Iterator[None]:
    """GRAPHMIND_DISABLED=1 and no default client yet; both restored afterwards."""
    import graphmind

    saved_env = os.environ.get("GRAPHMIND_DISABLED")
    with graphmind._default_lock:
        saved_default, graphmind._default = graphmind._default, None
    os.environ["GRAPHMIND_DISABLED"] = "1"
    try:
        yield
    finally:
        if saved_env is None:
            os.environ.pop("GRAPHMIND_DISABLED", None)
        else:
            os.environ["GRAPHMIND_DISABLED"] = saved_env
        with graphmind._default_lock:
            made, graphmind._default = graphmind._default, saved_default
        if made is not None:
            made.dispose()


# ---- running a case ---------------------------------------------------------------------------------


async def run_case(
    case: str, subject: GateSubject, *, hub: Callable[[], Hub] | None = None, **client_options: Any
) -> None:
    """Runs one line of the matrix against a fresh hub and client. `hub`: a factory of a started-on-enter
    hub (default: `FakeHub(pause_on_error="off")`); `client_options`: extra `graphmind.Client` options."""
    try:
        fn = _CASES[case]
    except KeyError:
        raise ValueError(f"unknown gate-matrix case {case!r}; the cases are {CASES}") from None
    with (hub or _fake_hub)() as started:
        client = Client(app="gate-matrix", url=started.url, retry_interval=0.2, **client_options)
        try:
            if not client.ready(5):
                raise AssertionError("the client did not attach to the hub")
            await fn(_Case(started, client, subject))
        finally:
            client.dispose()


def _fake_hub() -> Hub:
    return FakeHub(pause_on_error="off")
