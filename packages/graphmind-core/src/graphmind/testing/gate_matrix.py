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

import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from .. import protocol as proto
from .._api.client import Client
from .._base.errors import RunAborted
from ._case import Case, astream_items
from ._describer_check import DescriberCheck
from ._fakehub import FakeHub
from ._kill_switch import instance_attrs, kill_switch
from ._replay_cases import REPLAY_CASES
from ._subject import GateSubject, Hub

__all__ = ["BACKENDS", "CASES", "DescriberCheck", "GateSubject", "Hub", "run_case"]


from ._registry import CASE_FNS as _CASES
from ._registry import CASES, _case

# ---- the cases -------------------------------------------------------------------------------------


async def _before_inject(c: Case, is_async: bool) -> None:
    c.break_on(proto.BEFORE, (proto.INJECT, c.subject.injected))
    result = await c.call(is_async)
    c.subject.check_injected(result, c.subject.injected)
    assert c.subject.real_calls == 0, "a before-inject must not reach the real thing"
    end = await c.wait_node_end()
    assert end["type"] == proto.NODE_FINISHED and end.get("injected") is True


@_case
async def before_inject(c: Case) -> None:
    await _before_inject(c, False)


@_case
async def before_inject_async(c: Case) -> None:
    await _before_inject(c, True)


async def _after_inject(c: Case, is_async: bool) -> None:
    c.break_on(proto.AFTER, (proto.INJECT, c.subject.injected))
    result = await c.call(is_async)
    c.subject.check_injected(result, c.subject.injected)
    assert c.subject.real_calls == 1
    assert (await c.wait_node_end()).get("injected") is True


@_case
async def after_inject(c: Case) -> None:
    await _after_inject(c, False)


@_case
async def after_inject_async(c: Case) -> None:
    await _after_inject(c, True)


async def _after_retry(c: Case, is_async: bool) -> None:
    c.break_on(proto.AFTER, (proto.RETRY, None), (proto.CONTINUE, None))
    result = await c.call(is_async)
    c.subject.check_real(result)
    assert c.subject.real_calls == 2, (
        f"retry at the after gate runs the call again (real calls: {c.subject.real_calls})"
    )
    await c.wait_node_end()
    assert c.resumed_actions() == [proto.RETRY, proto.CONTINUE]


@_case
async def after_retry(c: Case) -> None:
    await _after_retry(c, False)


@_case
async def after_retry_async(c: Case) -> None:
    await _after_retry(c, True)


async def _error_retry(c: Case, is_async: bool) -> None:
    c.break_on(proto.ERROR_GATE, (proto.RETRY, None))
    c.subject.fail_next()
    result = await c.call(is_async)
    c.subject.check_real(result)
    assert c.subject.real_calls == 2
    assert (await c.wait_node_end())["type"] == proto.NODE_FINISHED
    assert c.resumed_actions() == [proto.RETRY]


@_case
async def error_retry(c: Case) -> None:
    await _error_retry(c, False)


@_case
async def error_retry_async(c: Case) -> None:
    await _error_retry(c, True)


async def _error_continue(c: Case, is_async: bool) -> None:
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
async def error_continue(c: Case) -> None:
    await _error_continue(c, False)


@_case
async def error_continue_async(c: Case) -> None:
    await _error_continue(c, True)


async def _abort(c: Case, is_async: bool) -> None:
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
async def abort(c: Case) -> None:
    await _abort(c, False)


@_case
async def abort_async(c: Case) -> None:
    await _abort(c, True)


async def _stream_items(c: Case, is_async: bool, limit: int | None) -> list[Any]:
    if is_async:
        items, stream = await astream_items(c.subject, c.thing, limit)
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


async def _stream_tee(c: Case, is_async: bool) -> None:
    if not c.subject.streams:
        return
    items = await _stream_items(c, is_async, None)
    c.subject.check_stream(items)
    end = await c.wait_node_end()
    assert end["type"] == proto.NODE_FINISHED and not end.get("cutShort"), end
    assert end.get("output") is not None
    assert c.subject.real_calls == 1


@_case
async def stream_tee(c: Case) -> None:
    await _stream_tee(c, False)


@_case
async def stream_tee_async(c: Case) -> None:
    await _stream_tee(c, True)


async def _stream_cut_short(c: Case, is_async: bool) -> None:
    if not c.subject.streams:
        return
    items = await _stream_items(c, is_async, 1)
    assert len(items) == 1
    end = await c.wait_node_end()
    assert end["type"] == proto.NODE_FINISHED and end.get("cutShort") is True, end


@_case
async def stream_cut_short(c: Case) -> None:
    await _stream_cut_short(c, False)


@_case
async def stream_cut_short_async(c: Case) -> None:
    await _stream_cut_short(c, True)


@_case
async def twenty_async_holds(c: Case) -> None:
    """20 calls held at once on one event loop: the loop keeps running, each is answered on its own."""
    import anyio

    c.hub.set_debug(breakpoints=[(c.node_id, proto.BEFORE)])
    results: list[Any] = []

    async def one() -> None:
        results.append(await c.subject.acall(c.thing))

    async with anyio.create_task_group() as calls:
        for _ in range(20):
            calls.start_soon(one)
        ticks = 0
        while len(c.events(proto.EXEC_PAUSED)) < 20:
            assert not results, "a held call returned before it was answered"
            await anyio.sleep(0.005)  # this task runs on while the others are held
            ticks += 1
        held_at = ticks
        for _ in range(5):
            await anyio.sleep(0)
            ticks += 1
        assert ticks > held_at and not results, "the event loop must keep running while 20 calls are held"
        for paused in c.events(proto.EXEC_PAUSED):
            c.hub.resolve(paused["gateId"], proto.CONTINUE)
    assert len(results) == 20
    for result in results:
        c.subject.check_real(result)
    assert c.subject.real_calls == 20


@_case
async def wrap_twice_is_once(c: Case) -> None:
    again = c.subject.instrument(c.thing, c.client)
    c.subject.check_real(c.subject.call(again))
    await c.settled()
    assert len(c.events(proto.NODE_STARTED)) == 1, "instrumenting twice must give one node per call"


@_case
async def undo(c: Case) -> None:
    bare = c.subject.undo(c.thing)
    c.subject.check_real(c.subject.call(bare))
    c.subject.check_real(await c.subject.acall(bare))
    await c.settled()
    assert c.events(proto.NODE_STARTED) == [], "an undone thing makes no node"
    assert c.subject.real_calls == 2


@_case
async def disabled(c: Case) -> None:
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
    with kill_switch():
        bare = c.subject.make()
        attrs = instance_attrs(bare)
        assert c.subject.instrument(bare, None) is bare  # type: ignore[arg-type]  # None: the default session
        assert instance_attrs(bare) == attrs, (
            "GRAPHMIND_DISABLED=1 with the default session still patched the object"
        )
        c.subject.check_real(c.subject.call(bare))
        c.subject.check_real(await c.subject.acall(bare))


for _replay_case in REPLAY_CASES:  # _replay_cases.py: a recording answers the same call again
    _case(_replay_case)


# ---- running a case ---------------------------------------------------------------------------------


BACKENDS = ("asyncio", "trio")  # the async libraries the kit's cases run under (with anyio.run)


async def run_case(
    case: str,
    subject: GateSubject,
    *,
    hub: Callable[[], Hub] | None = None,
    check_describers: bool = True,
    **client_options: Any,
) -> None:
    """Runs one line of the matrix against a fresh hub and client. `hub`: a factory of a started-on-enter
    hub (default: `FakeHub(pause_on_error="off")`); `client_options`: extra `graphmind.Client` options.

    `check_describers` (on unless turned off): the case also fails when a payload the adapter handed
    core was not a fresh JSON-safe value (an app object, a tuple, NaN, a value changed afterwards:
    `DescriberCheck`, docs/adapters.md "The describer contract")."""
    try:
        fn = _CASES[case]
    except KeyError:
        raise ValueError(f"unknown gate-matrix case {case!r}; the cases are {CASES}") from None
    with (hub or _fake_hub)() as started:
        client = Client(app="gate-matrix", url=started.url, retry_interval=0.2, **client_options)
        check = DescriberCheck(client) if check_describers else None
        try:
            if not client.ready(5):
                raise AssertionError("the client did not attach to the hub")
            await fn(Case(started, client, subject))
            problems = check.problems() if check is not None else []
            assert not problems, "a describer broke the contract (fresh JSON-safe values):\n" + "\n".join(
                problems
            )
        finally:
            if check is not None:
                check.close()
            client.dispose()


# registers the default-session case and the edit cases, after the ones above
from . import _default_cases, _edit_cases, _effect_cases  # noqa: E402, F401


def _fake_hub() -> Hub:
    return FakeHub(pause_on_error="off")
