"""The call loop (`_call_loop.call_flow`) reads whether a gate can hold again at each gate: a call that
starts detached passes its before gate on the fast path, and its after or error gate still holds when
a hub attached during the body (or the run was aborted during it); detached, an error ends the node
and re-raises the very object, a failing describer propagates, a BaseException passes through.

A hub "attaching during the body" is played by a client attached to a FakeHub whose engine reads it
as detached until the body says otherwise: the hub control's transport is swapped for a view of the
real one that answers `attached` from a flag (the real transport, its writer and reader untouched)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import graphmind
from graphmind import RunAborted
from graphmind.adapter import NodeSpec, Settled, engine_for
from graphmind.testing import FakeHub


class Boom(Exception):
    pass


class _SeenAs:
    """The real transport, except that `attached` reads as `self.on` (and the real state)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.on = False

    @property
    def attached(self) -> bool:
        return self.on and self.real.attached

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@pytest.fixture
def seen() -> Any:
    views: list[tuple[Any, Any]] = []

    def detached_until_body(client: graphmind.Client) -> Callable[[], None]:
        """The client reads as detached to its engine; the returned function attaches it (call it in a body)."""
        hub = client._hub
        real = hub.transport
        if isinstance(real, _SeenAs):
            real.on = False
            view = real
        else:
            assert real is not None and real.attached
            view = _SeenAs(real)
            hub.transport = view  # type: ignore[assignment]
            views.append((hub, real))

        def attach() -> None:
            view.on = True

        return attach

    yield detached_until_body
    for hub, real in views:
        hub.transport = real


def _events(hub: FakeHub, name: str) -> list[str]:
    return [
        e["type"] for e in hub.events if e.get("name") == name and e["type"].startswith(("node.", "exec."))
    ]


def test_a_detached_call_passes_its_gates_and_keeps_its_output_and_usage(
    hub: FakeHub, client: graphmind.Client, seen: Any
) -> None:
    seen(client)
    hub.set_debug(breakpoints=[("tool:quiet", "before"), ("tool:quiet", "after")])
    got = engine_for(client).execute(
        NodeSpec("quiet"),
        lambda: {"v": 1},
        describe_output=lambda r: r["v"],
        describe_usage=lambda r: {"n": 2},
    )
    assert got == {"v": 1}
    finished = hub.wait_event(lambda e: e["type"] == "node.finished" and e["name"] == "quiet")
    assert finished["output"] == 1 and finished["usage"] == {"n": 2}
    assert hub.of_type("exec.paused") == []


@pytest.mark.parametrize("answer", ["inject", "retry"])
def test_a_hub_attaching_during_the_body_holds_the_after_gate(
    hub: FakeHub, client: graphmind.Client, answer: str, seen: Any
) -> None:
    attach = seen(client)
    calls: list[int] = []

    def body() -> str:
        calls.append(1)
        attach()
        return f"real {len(calls)}"

    hub.set_debug(breakpoints=[("tool:late", "after")])
    answers = iter([(answer, "from the debugger"), ("continue", None)])
    hub.auto_answer(lambda _e: next(answers))
    got = engine_for(client).execute(NodeSpec("late"), body)
    if answer == "inject":
        assert got == "from the debugger" and len(calls) == 1
    else:
        assert got == "real 2" and len(calls) == 2  # retry ran the body again
    paused = hub.of_type("exec.paused")[0]
    assert paused["gate"] == "after" and paused["output"] == "real 1"


async def test_a_hub_attaching_during_an_async_body_holds_the_after_gate(
    hub: FakeHub, client: graphmind.Client, seen: Any
) -> None:
    attach = seen(client)

    async def body() -> str:
        attach()
        return "real"

    def settle(result: str) -> Any:
        async def settled() -> Settled:
            return Settled(result.upper(), {"text": result})

        return settled()

    hub.set_debug(breakpoints=[("tool:alate", "after")])
    hub.auto_answer("inject", "injected")
    ex = await engine_for(client).astart_node(NodeSpec("alate"))
    assert await ex.run_async(body, settle=settle) == "injected"
    assert hub.of_type("exec.paused")[0]["output"] == {"text": "real"}


@pytest.mark.parametrize("where", ["body", "settle"])
def test_a_body_or_settle_that_raises_after_a_hub_attached_opens_the_error_gate(
    hub: FakeHub, client: graphmind.Client, where: str, seen: Any
) -> None:
    attach = seen(client)
    attempts: list[str] = []
    parents: list[str | None] = []
    engine = engine_for(client)

    def body() -> str:
        attempts.append("body")
        attach()
        if where == "body" and len(attempts) == 1:
            raise Boom("first attempt")
        return "ok"

    def settle(result: str) -> Settled:
        if where == "settle" and len(attempts) == 1:
            raise Boom("first read")
        return Settled(result, result)

    def converter(value: Any) -> Any:
        parents.append(engine.current_parent())  # the error gate opens where the flow opens it
        return value

    hub.set_debug(breakpoints=[("tool:flaky", "error")])
    hub.auto_answer("retry")
    ex = engine.start_node(NodeSpec("flaky"))
    assert ex.run_sync(body, settle=settle, from_injected=converter) == "ok"
    assert attempts == ["body", "body"]
    paused = hub.of_type("exec.paused")
    assert [p["gate"] for p in paused] == ["error"]
    assert paused[0]["error"]["message"] == ("first attempt" if where == "body" else "first read")

    # inject at the same gate: the converter runs in the node's context for a body's error (the
    # error gate opens inside the attempt), outside it for a settle's (read outside the node)
    attempts.clear()
    attach = seen(client)
    hub.auto_answer("inject", "instead")
    ex = engine.start_node(NodeSpec("flaky"))
    assert ex.run_sync(body, settle=settle, from_injected=converter) == "instead"
    assert parents == ([ex.instance_id] if where == "body" else [None])


def test_detached_errors_end_the_node_and_raise_the_very_object(
    hub: FakeHub, client: graphmind.Client, seen: Any
) -> None:
    seen(client)
    engine = engine_for(client)
    error = Boom("down")

    def failing() -> str:
        raise error

    with pytest.raises(Boom) as caught:
        engine.execute(NodeSpec("down"), failing)
    assert caught.value is error

    read_error = Boom("unreadable")

    def bad_settle(_r: str) -> Settled:
        raise read_error

    ex = engine.start_node(NodeSpec("unread"))
    with pytest.raises(Boom) as caught:
        ex.run_sync(lambda: "x", settle=bad_settle)
    assert caught.value is read_error and ex.ended

    # a describer that fails is not the call's error: it propagates as before, the node stays open
    ex = engine.start_node(NodeSpec("undescribed"))
    with pytest.raises(ZeroDivisionError):
        ex.run_sync(lambda: "x", describe_output=lambda _r: 1 / 0)
    assert not ex.ended
    hub.wait_event(lambda e: e["type"] == "node.error" and e["name"] == "unread")
    assert _events(hub, "down") == ["node.started", "node.error"]
    assert hub.of_type("exec.paused") == []


def test_a_run_aborted_during_a_detached_body_ends_at_the_after_gate(
    hub: FakeHub, client: graphmind.Client, seen: Any
) -> None:
    seen(client)
    engine = engine_for(client)
    with pytest.raises(RunAborted), client.run("aborting") as run:

        def body() -> str:
            run.mark_aborted()
            return "late"

        engine.execute(NodeSpec("cut"), body)
    hub.wait_event(lambda e: e["type"] == "node.error" and e["name"] == "cut")


def test_base_exceptions_pass_through_and_reset_the_context(
    hub: FakeHub, client: graphmind.Client, seen: Any
) -> None:
    seen(client)
    engine = engine_for(client)

    def interrupted() -> str:
        raise KeyboardInterrupt

    ex = engine.start_node(NodeSpec("interrupted"))
    with pytest.raises(KeyboardInterrupt):
        ex.run_sync(interrupted)
    # The caller gave up: the node ends cancelled (never left running), its context reset.
    assert engine.current_parent() is None and ex.ended
    error = hub.wait_event(lambda e: e["type"] == "node.error" and e["name"] == "interrupted")
    assert (error["error"]["name"], error["cancelled"]) == ("KeyboardInterrupt", True)


# ---- detached, the adapter's settle hook runs before the flow is built as well (CallLoop._settled_detached)


@pytest.mark.parametrize("answer", ["inject", "retry"])
def test_a_hub_attaching_during_settle_holds_the_after_gate_on_what_settle_described(
    hub: FakeHub, client: graphmind.Client, answer: str, seen: Any
) -> None:
    attach = seen(client)
    bodies: list[int] = []
    parents: list[str | None] = []
    engine = engine_for(client)

    def body() -> str:
        bodies.append(1)
        return f"real {len(bodies)}"

    def settle(result: str) -> Settled:
        parents.append(engine.current_parent())  # outside the node, as the flow calls it
        attach()
        return Settled(result.upper(), {"text": result}, {"tokens": 3})

    hub.set_debug(breakpoints=[("tool:described", "after")])
    answers = iter([(answer, "from the debugger"), ("continue", None)])
    hub.auto_answer(lambda _e: next(answers))
    ex = engine.start_node(NodeSpec("described"))
    got = ex.run_sync(body, settle=settle)
    if answer == "inject":
        assert got == "from the debugger" and len(bodies) == 1
    else:
        assert got == "REAL 2" and len(bodies) == 2  # the retry's attempt settled by the flow
    paused = hub.of_type("exec.paused")[0]
    assert paused["gate"] == "after" and paused["output"] == {"text": "real 1"}
    assert parents[0] is None and ex.ended


async def test_a_hub_attaching_during_an_async_settle_holds_the_after_gate(
    hub: FakeHub, client: graphmind.Client, seen: Any
) -> None:
    attach = seen(client)

    async def body() -> str:
        return "real"

    async def settle(result: str) -> Settled:
        attach()
        return Settled(result.upper(), {"text": result})

    hub.set_debug(breakpoints=[("tool:asettled", "after")])
    hub.auto_answer("inject", "injected")
    ex = await engine_for(client).astart_node(NodeSpec("asettled"))
    assert await ex.run_async(body, settle=settle) == "injected"
    assert hub.of_type("exec.paused")[0]["output"] == {"text": "real"}


def test_detached_settle_finishes_the_node_with_its_description_and_owned_output(
    hub: FakeHub, client: graphmind.Client, seen: Any
) -> None:
    seen(client)
    hub.set_debug(breakpoints=[("tool:plain", "after")])
    ex = engine_for(client).start_node(NodeSpec("plain"))
    got = ex.run_sync(lambda: "reply", settle=lambda r: Settled(r.upper(), {"text": r}, {"n": 1}, owned=True))
    assert got == "REPLY" and ex.ended
    finished = hub.wait_event(lambda e: e["type"] == "node.finished" and e["name"] == "plain")
    assert finished["output"] == {"text": "reply"} and finished["usage"] == {"n": 1}
    assert hub.of_type("exec.paused") == []


async def test_detached_settle_that_finishes_later_leaves_the_node_open(
    hub: FakeHub, client: graphmind.Client, seen: Any
) -> None:
    seen(client)
    engine = engine_for(client)
    ex = engine.start_node(NodeSpec("streamed"))
    assert ex.run_sync(lambda: "stream", settle=lambda r: Settled(r, finishes_later=True)) == "stream"
    assert not ex.ended

    async def asettle(result: str) -> Settled:
        return Settled(result, finishes_later=True)

    async def abody() -> str:
        return "astream"

    aex = await engine.astart_node(NodeSpec("astreamed"))
    assert await aex.run_async(abody, settle=asettle) == "astream"
    assert not aex.ended


def test_a_run_aborted_during_a_detached_settle_ends_at_the_after_gate(
    hub: FakeHub, client: graphmind.Client, seen: Any
) -> None:
    seen(client)
    engine = engine_for(client)
    with pytest.raises(RunAborted), client.run("aborting settle") as run:

        def settle(result: str) -> Settled:
            run.mark_aborted()
            return Settled(result, result)

        engine.start_node(NodeSpec("cut late")).run_sync(lambda: "late", settle=settle)
    hub.wait_event(lambda e: e["type"] == "node.error" and e["name"] == "cut late")


def test_a_base_exception_in_a_detached_settle_passes_through(
    hub: FakeHub, client: graphmind.Client, seen: Any
) -> None:
    seen(client)
    engine = engine_for(client)

    def settle(_r: str) -> Settled:
        raise KeyboardInterrupt

    ex = engine.start_node(NodeSpec("interrupted read"))
    with pytest.raises(KeyboardInterrupt):
        ex.run_sync(lambda: "x", settle=settle)
    assert engine.current_parent() is None and ex.ended
    error = hub.wait_event(lambda e: e["type"] == "node.error" and e["name"] == "interrupted read")
    assert (error["error"]["name"], error["cancelled"]) == ("KeyboardInterrupt", True)
