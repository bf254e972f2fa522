"""The gate engine against a hub speaking protocol v1 (graphmind.testing.FakeHub)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import graphmind
from graphmind.adapter import NodeSpec, engine_for
from graphmind.testing import FakeHub


def test_before_breakpoint_inject_returns_value_and_body_never_runs(
    hub: FakeHub, client: graphmind.Client
) -> None:
    calls = []

    @client.tool
    def lookup(order_id: str) -> str:
        calls.append(order_id)
        return "real"

    hub.set_debug(breakpoints=[("tool:lookup", "before")])
    hub.auto_answer("inject", {"status": "injected"})
    assert lookup("A1") == {"status": "injected"}
    assert calls == []
    finished = hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "tool:lookup")
    assert finished["injected"] is True
    assert finished["output"] == {"status": "injected"}
    paused = hub.of_type("exec.paused")[0]
    assert paused["reason"] == "breakpoint" and paused["gate"] == "before"
    assert paused["input"] == {"order_id": "A1"}
    assert paused["actions"] == ["continue", "inject", "abort"]


def test_a_breakpoint_holds_a_sync_call_until_answered(hub: FakeHub, client: graphmind.Client) -> None:
    search = client.wrap(lambda q: f"found {q}", name="search")
    hub.set_debug(breakpoints=[("tool:search", "before")])
    result: list[str] = []
    worker = threading.Thread(target=lambda: result.append(search("x")))
    worker.start()
    paused = hub.next_paused()
    assert worker.is_alive() and result == []
    hub.resolve(paused["gateId"], "continue")
    worker.join(5)
    assert result == ["found x"]
    resumed = hub.wait_event(lambda e: e["type"] == "exec.resumed")
    assert resumed["action"] == "continue" and resumed["by"] == "hub"
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["heldMs"] > 0 and finished["durationMs"] >= finished["heldMs"]


async def test_a_breakpoint_holds_an_async_call_without_blocking_the_loop(
    hub: FakeHub, client: graphmind.Client
) -> None:
    @client.tool("search")
    async def search(q: str) -> str:
        return f"found {q}"

    hub.set_debug(breakpoints=[("tool:search", "before")])
    task = asyncio.create_task(search("y"))
    ticks = 0
    while not hub.of_type("exec.paused"):
        ticks += 1
        await asyncio.sleep(0.01)
    assert not task.done()
    hub.resolve(hub.of_type("exec.paused")[0]["gateId"], "continue")
    assert await asyncio.wait_for(task, 5) == "found y"


def test_abort_raises_and_the_next_call_in_the_run_raises_without_running(
    hub: FakeHub, client: graphmind.Client
) -> None:
    calls = []

    @client.tool
    def act(n: int) -> int:
        calls.append(n)
        return n

    hub.set_debug(breakpoints=[("tool:act", "before")])
    hub.auto_answer("abort")
    with pytest.raises(graphmind.RunAborted), client.run("agent") as run:
        try:
            act(1)
        except graphmind.RunAborted:
            assert run.aborted
            act(2)  # the agent loop carries on: this must raise at once, with no gate
    assert calls == []
    assert len(hub.of_type("exec.paused")) == 1
    finished = hub.wait_event(lambda e: e["type"] == "run.finished")
    assert finished["status"] == "aborted"


def test_after_gate_inject_replaces_the_result(hub: FakeHub, client: graphmind.Client) -> None:
    double = client.wrap(lambda n: n * 2, name="double")
    hub.set_debug(breakpoints=[("tool:double", "after")])
    hub.auto_answer("inject", 99)
    assert double(2) == 99
    paused = hub.of_type("exec.paused")[0]
    assert paused["gate"] == "after" and paused["output"] == 4 and "retry" in paused["actions"]


def test_after_gate_retry_runs_the_body_again(hub: FakeHub, client: graphmind.Client) -> None:
    calls = []

    def count() -> int:
        calls.append(1)
        return len(calls)

    counted = client.wrap(count, name="count")
    hub.set_debug(breakpoints=[("tool:count", "after")])
    answers = iter(["retry", "continue"])
    hub.auto_answer(lambda _e: (next(answers), None))
    assert counted() == 2
    assert len(calls) == 2


def test_error_gate_retry_calls_the_body_twice(hub: FakeHub, client: graphmind.Client) -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("429 too many requests")
        return "ok"

    gated = client.wrap(flaky, name="flaky")
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("retry")
    assert gated() == "ok"
    assert len(calls) == 2
    paused = hub.of_type("exec.paused")[0]
    assert paused["reason"] == "error" and paused["error"]["name"] == "ConnectionError"


def test_error_gate_inject_swallows_the_error(hub: FakeHub, client: graphmind.Client) -> None:
    def broken() -> str:
        raise ValueError("nope")

    gated = client.wrap(broken, name="broken")
    hub.set_debug(pause_on_error="tool")
    hub.auto_answer("inject", "fallback")
    assert gated() == "fallback"


def test_error_gate_continue_reraises_the_same_exception_object(
    hub: FakeHub, client: graphmind.Client
) -> None:
    original = ValueError("the original")

    def broken() -> None:
        raise original

    gated = client.wrap(broken, name="broken")
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("continue")
    with pytest.raises(ValueError) as caught:
        gated()
    assert caught.value is original
    error = hub.wait_event(lambda e: e["type"] == "node.error")
    assert error["error"]["message"] == "the original"


def test_pause_on_error_scoped_to_another_kind_does_not_hold(hub: FakeHub, client: graphmind.Client) -> None:
    gated = client.wrap(lambda: 1 / 0, name="div")
    hub.set_debug(pause_on_error="llm")
    with pytest.raises(ZeroDivisionError):
        gated()
    assert hub.of_type("exec.paused") == []


async def test_fifty_tasks_held_at_once_while_another_task_keeps_running(
    hub: FakeHub, client: graphmind.Client
) -> None:
    @client.tool("slow")
    async def slow(i: int) -> int:
        return i

    hub.set_debug(breakpoints=[("tool:slow", "before")])
    tasks = [asyncio.create_task(slow(i)) for i in range(50)]
    heartbeat = 0
    deadline = time.monotonic() + 10
    while len(hub.of_type("exec.paused")) < 50:
        heartbeat += 1
        await asyncio.sleep(0.005)
        assert time.monotonic() < deadline
    assert heartbeat > 0 and not any(t.done() for t in tasks)
    for paused in hub.of_type("exec.paused"):
        hub.resolve(paused["gateId"], "continue")
    assert sorted(await asyncio.wait_for(asyncio.gather(*tasks), 10)) == list(range(50))


def test_a_hub_that_drops_mid_hold_releases_the_call_within_a_second(
    hub: FakeHub, client: graphmind.Client
) -> None:
    gated = client.wrap(lambda: "ran", name="held")
    hub.set_debug(breakpoints=[("tool:held", "before")])
    result: list[str] = []
    worker = threading.Thread(target=lambda: result.append(gated()))
    worker.start()
    hub.next_paused()
    dropped_at = time.monotonic()
    hub.drop_connections()
    worker.join(5)
    assert result == ["ran"]
    assert time.monotonic() - dropped_at < 1.0


def test_events_emitted_before_attach_arrive_after_attach_in_order() -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="early", url=hub.url, retry_interval=0.2)
        hub.accept = True
        gated = client.wrap(lambda i: i, name="early")
        # Emitted while the transport is still connecting (the connect is lazy and asynchronous).
        for i in range(20):
            gated(i)
        assert client.ready(5)
        hub.wait_for(lambda: len(hub.of_type("node.finished")) >= 20)
        seqs = [e["seq"] for e in hub.events]
        assert seqs == sorted(seqs)
        assert [e["output"] for e in hub.of_type("node.finished")] == list(range(20))
        client.dispose()


def test_pause_timeout_auto_continues(hub: FakeHub) -> None:
    client = graphmind.Client(app="timeout", url=hub.url, pause_timeout=0.1)
    assert client.ready(5)
    gated = client.wrap(lambda: "done", name="t")
    hub.set_debug(breakpoints=[("tool:t", "before")])
    assert gated() == "done"
    resumed = hub.wait_event(lambda e: e["type"] == "exec.resumed")
    assert resumed["by"] == "timeout"
    client.dispose()


def test_step_mode_holds_before_and_after(hub: FakeHub, client: graphmind.Client) -> None:
    gated = client.wrap(lambda: "v", name="stepped")
    hub.set_debug(mode="step")
    hub.auto_answer("continue")
    assert gated() == "v"
    assert [(p["gate"], p["reason"]) for p in hub.of_type("exec.paused")] == [
        ("before", "step"),
        ("after", "step"),
    ]


def test_pause_request_holds_the_next_gate_once(hub: FakeHub, client: graphmind.Client) -> None:
    gated = client.wrap(lambda: "v", name="p")
    hub.pause()
    hub.auto_answer("continue")
    deadline = time.monotonic() + 2
    while not client._hub.pause_pending and time.monotonic() < deadline:
        time.sleep(0.005)
    assert gated() == "v" and gated() == "v"
    assert [p["reason"] for p in hub.of_type("exec.paused")] == ["pause"]


def test_a_pause_taken_back_before_any_gate_holds_nothing(hub: FakeHub, client: graphmind.Client) -> None:
    gated = client.wrap(lambda: "v", name="p")
    hub.pause()
    hub.wait_for(lambda: client._hub.pause_pending)
    hub.unpause()
    hub.wait_for(lambda: not client._hub.pause_pending)
    assert gated() == "v"
    assert hub.of_type("exec.paused") == []


def test_taking_back_one_runs_pause_keeps_the_any_run_pause(hub: FakeHub, client: graphmind.Client) -> None:
    gated = client.wrap(lambda: "v", name="p")
    hub.auto_answer("continue")
    with client.run("held") as run:
        hub.pause()
        hub.pause(run.run_id)
        hub.wait_for(lambda: run.run_id in client._hub._pause_runs and client._hub._pause_any)
        hub.unpause(run.run_id)
        hub.wait_for(lambda: run.run_id not in client._hub._pause_runs)
        assert gated() == "v"
    assert [p["reason"] for p in hub.of_type("exec.paused")] == ["pause"]


def test_run_abort_from_the_hub_releases_a_held_gate_with_run_aborted(
    hub: FakeHub, client: graphmind.Client
) -> None:
    gated = client.wrap(lambda: "v", name="h")
    hub.set_debug(breakpoints=[("tool:h", "before")])
    errors: list[BaseException] = []

    def agent() -> None:
        try:
            with client.run("abortable"):
                gated()
        except graphmind.RunAborted as exc:
            errors.append(exc)

    worker = threading.Thread(target=agent)
    worker.start()
    paused = hub.next_paused()
    hub.abort_run(paused["runId"])
    worker.join(5)
    assert len(errors) == 1


def test_unknown_gate_answer_is_reported(hub: FakeHub, client: graphmind.Client) -> None:
    hub.resolve("g-nope", "continue")
    hub.wait_for(lambda: "g-nope" in hub.unknown_gates)


def test_an_injected_value_that_cannot_be_converted_holds_the_gate_again(
    hub: FakeHub, client: graphmind.Client
) -> None:
    spec = NodeSpec("typed", "tool", {"x": 1})
    answers = iter([("inject", "not a number"), ("inject", 7)])
    hub.set_debug(breakpoints=[("tool:typed", "before")])
    hub.auto_answer(lambda _e: next(answers))
    assert engine_for(client).execute(spec, lambda: 1, from_injected=int) == 7
    assert len(hub.of_type("exec.paused")) == 2


def test_dispose_delivers_everything_already_emitted(hub: FakeHub) -> None:
    for _ in range(5):
        client = graphmind.Client(app="flush", url=hub.url)
        assert client.ready(5)
        gated = client.wrap(lambda i: i, name="burst")
        with client.run("burst") as run:
            for i in range(300):
                gated(i)
        run_id = run.run_id
        client.dispose()  # returns only once the writer has written the last frame
        hub.wait_event(lambda e, r=run_id: e["type"] == "run.finished" and e["runId"] == r, timeout=5)
