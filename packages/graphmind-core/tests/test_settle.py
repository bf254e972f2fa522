"""The engine's `settle` hook: the adapter's say on a body's result before the after gate (graphmind.adapter.Settled)."""

from __future__ import annotations

from typing import Any

import pytest

import graphmind
from graphmind.adapter import NodeSpec, Settled, engine_for
from graphmind.testing import FakeHub


class Raw:
    """A framework object the adapter must describe itself (and may have to replace)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _finished(hub: FakeHub, name: str) -> dict[str, Any]:
    return hub.wait_event(lambda e: e["type"] == "node.finished" and e["name"] == name)


def test_settle_describes_the_result_and_replaces_what_the_app_gets(
    hub: FakeHub, client: graphmind.Client
) -> None:
    original = Raw("hello")
    replacement = Raw("replayed")
    seen: list[Raw] = []

    def settle(result: Raw) -> Settled:
        seen.append(result)
        return Settled(replacement, {"text": result.text}, {"total_tokens": 3})

    hub.set_debug(breakpoints=[("llm:step", "after")])
    hub.auto_answer("continue")
    got = engine_for(client).execute(
        NodeSpec("step", "llm", {"q": 1}),
        lambda: original,
        describe_output=lambda _r: "unused",
        settle=settle,
    )
    assert got is replacement and seen == [original]
    paused = hub.of_type("exec.paused")[0]
    assert paused["gate"] == "after" and paused["output"] == {"text": "hello"}
    finished = _finished(hub, "step")
    assert finished["output"] == {"text": "hello"} and finished["usage"] == {"total_tokens": 3}


def test_finishes_later_skips_the_after_gate_and_the_adapter_finishes_the_node(
    hub: FakeHub, client: graphmind.Client
) -> None:
    stream = Raw("live")
    hub.set_debug(breakpoints=[("llm:stream", "after")])
    hub.auto_answer("inject", "must not be asked")
    ex = engine_for(client).start_node(NodeSpec("stream", "llm", {}))
    got = ex.run_sync(lambda: stream, settle=lambda r: Settled(r, finishes_later=True))
    assert got is stream
    assert not ex.ended and hub.of_type("exec.paused") == []
    ex.finish({"text": "live"})
    assert _finished(hub, "stream")["output"] == {"text": "live"}
    assert hub.of_type("exec.paused") == []


def test_after_gate_retry_settles_each_result(hub: FakeHub, client: graphmind.Client) -> None:
    results = iter([Raw("first"), Raw("second")])
    settled: list[str] = []

    def settle(result: Raw) -> Settled:
        settled.append(result.text)
        return Settled(result.text.upper(), result.text)

    hub.set_debug(breakpoints=[("tool:twice", "after")])
    answers = iter(["retry", "continue"])
    hub.auto_answer(lambda _e: (next(answers), None))
    assert engine_for(client).execute(NodeSpec("twice"), lambda: next(results), settle=settle) == "SECOND"
    assert settled == ["first", "second"]
    assert _finished(hub, "twice")["output"] == "second"


@pytest.mark.parametrize("gate", ["before", "after"])
def test_a_converter_returning_settled_finishes_with_its_description(
    hub: FakeHub, client: graphmind.Client, gate: str
) -> None:
    def from_injected(value: Any) -> Settled:
        return Settled(Raw(value["text"]), {"described": value["text"]}, {"total_tokens": 1})

    hub.set_debug(breakpoints=[("tool:conv", gate)])
    hub.auto_answer("inject", {"text": "injected"})
    got = engine_for(client).execute(
        NodeSpec("conv"),
        lambda: Raw("real"),
        from_injected=from_injected,
        settle=lambda r: Settled(r, r.text),
    )
    assert isinstance(got, Raw) and got.text == "injected"
    finished = _finished(hub, "conv")
    assert finished["output"] == {"described": "injected"} and finished["usage"] == {"total_tokens": 1}
    assert finished["injected"] is True


def test_error_gate_inject_through_a_settled_converter(hub: FakeHub, client: graphmind.Client) -> None:
    def broken() -> Raw:
        raise ConnectionError("down")

    hub.set_debug(pause_on_error="on")
    hub.auto_answer("inject", "fallback")
    got = engine_for(client).execute(
        NodeSpec("err"),
        broken,
        from_injected=lambda v: Settled(Raw(v), {"text": v}),
        settle=lambda r: Settled(r),
    )
    assert got.text == "fallback"
    assert _finished(hub, "err")["output"] == {"text": "fallback"}


async def test_async_settle_and_an_async_converter(hub: FakeHub, client: graphmind.Client) -> None:
    async def call() -> Raw:
        return Raw("body")

    async def settle(result: Raw) -> Settled:
        return Settled(Raw("replay of " + result.text), result.text)

    async def build(value: Any) -> Settled:
        if not isinstance(value, str):
            raise TypeError("a string, please")
        return Settled(Raw(value), {"built": value})

    # continue at the after gate: the app gets the replacement, the node the description
    hub.set_debug(breakpoints=[("llm:a", "after")])
    hub.auto_answer("continue")
    got = await engine_for(client).aexecute(NodeSpec("a", "llm"), call, settle=settle, from_injected=build)
    assert got.text == "replay of body"
    assert _finished(hub, "a")["output"] == "body"

    # an async converter that raises holds the gate again; the next inject is awaited and used
    hub.set_debug(breakpoints=[("llm:b", "before")])
    answers = iter([("inject", 5), ("inject", "ok")])
    hub.auto_answer(lambda _e: next(answers))
    got = await engine_for(client).aexecute(NodeSpec("b", "llm"), call, settle=settle, from_injected=build)
    assert got.text == "ok"
    assert len([e for e in hub.of_type("exec.paused") if e["nodeId"] == "llm:b"]) == 2
    finished = _finished(hub, "b")
    assert finished["output"] == {"built": "ok"} and finished["injected"] is True


async def test_async_finishes_later_returns_at_once(hub: FakeHub, client: graphmind.Client) -> None:
    async def call() -> str:
        return "stream"

    async def settle(result: str) -> Settled:
        return Settled(result, finishes_later=True)

    hub.set_debug(breakpoints=[("llm:later", "after")])
    ex = await engine_for(client).astart_node(NodeSpec("later", "llm"))
    assert await ex.run_async(call, settle=settle) == "stream"
    assert not ex.ended and hub.of_type("exec.paused") == []
    ex.finish("done")
    assert _finished(hub, "later")["output"] == "done"


def test_a_settle_that_fails_opens_the_error_gate_and_retry_runs_the_call_again(
    hub: FakeHub, client: graphmind.Client
) -> None:
    # The adapter's settle reads the attempt's reply; a read that fails (a reset mid-body) is the
    # call failing: the error gate holds it, and retry runs the call again.
    attempts: list[int] = []

    def settle(result: Raw) -> Settled:
        if len(attempts) == 1:
            raise ConnectionResetError("reset while reading the body")
        return Settled(result, result.text)

    def call() -> Raw:
        attempts.append(1)
        return Raw(f"attempt {len(attempts)}")

    hub.set_debug(pause_on_error="on")
    hub.auto_answer("retry")
    got = engine_for(client).execute(NodeSpec("flaky"), call, settle=settle)
    assert got.text == "attempt 2" and len(attempts) == 2
    assert [p["gate"] for p in hub.of_type("exec.paused")] == ["error"]
    assert _finished(hub, "flaky")["output"] == "attempt 2"


async def test_a_settle_that_fails_with_no_gate_ends_the_node_and_raises_that_error(
    hub: FakeHub, client: graphmind.Client
) -> None:
    error = ConnectionResetError("reset while reading the body")

    async def settle(result: Raw) -> Settled:
        raise error

    async def call() -> Raw:
        return Raw("x")

    with pytest.raises(ConnectionResetError) as raised:
        await engine_for(client).aexecute(NodeSpec("broken"), call, settle=settle)
    assert raised.value is error
    ended = hub.wait_event(lambda e: e["type"] == "node.error" and e["nodeId"] == "tool:broken")
    assert "reset while reading" in str(ended["error"])
