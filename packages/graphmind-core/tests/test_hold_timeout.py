"""Warn once when a hold outlives a known timeout (issue 16 item 10; docs/timeouts.md): the adapter
passes the timeout on the node, core warns while the gate is still held, once per node id."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest

import graphmind
from graphmind._node.hold_timeout import HoldTimeouts
from graphmind.adapter import KnownTimeout, NodeSpec, engine_for
from graphmind.testing import FakeHub

TIMEOUT = KnownTimeout(0.2, "the workflow's timeout", "pass timeout=None")
WARNING = (
    "[graphmind] the before gate of tool:search has been held longer than the workflow's timeout (0.2 s), "
    "which keeps running while a gate is held: the call may time out when it resumes. Prefer removing "
    "the timeout while debugging (pass timeout=None)."
)


def _spec(timeout: KnownTimeout | None = TIMEOUT) -> NodeSpec:
    return NodeSpec("search", "tool", {"q": "x"}, hold_timeout=timeout)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "has been held longer than" in r.getMessage()]


def _wait(predicate: Any, what: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _held_call(hub: FakeHub, client: graphmind.Client, spec: NodeSpec, answered: int) -> threading.Thread:
    """Runs one gated call in a thread and waits until its gate holds."""
    t = threading.Thread(target=lambda: engine_for(client).execute(spec, lambda: "real"), daemon=True)
    t.start()
    hub.wait_for(lambda: len(hub.of_type("exec.paused")) > answered, what="the gate held")
    return t


def test_a_hold_longer_than_the_timeout_warns_once_while_still_held(
    hub: FakeHub, client: graphmind.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    hub.set_debug(breakpoints=[("tool:search", "before")])
    for answered in range(2):
        t = _held_call(hub, client, _spec(), answered)
        if answered == 0:
            _wait(lambda: _warnings(caplog), "the warning")  # warned during the hold, not after it
            assert t.is_alive()
        else:
            time.sleep(0.3)  # the second hold also outlives the timeout: no second warning
        hub.resolve(hub.of_type("exec.paused")[answered]["gateId"], "continue")
        t.join(5)
    assert _warnings(caplog) == [WARNING]


def test_a_hold_shorter_than_the_timeout_or_a_node_without_one_never_warns(
    hub: FakeHub, client: graphmind.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    hub.set_debug(breakpoints=[("tool:search", "before")])
    t = _held_call(hub, client, _spec(KnownTimeout(30, "a long timeout")), 0)
    hub.resolve(hub.of_type("exec.paused")[0]["gateId"], "continue")
    t.join(5)
    t = _held_call(hub, client, _spec(None), 1)
    time.sleep(0.3)
    hub.resolve(hub.of_type("exec.paused")[1]["gateId"], "continue")
    t.join(5)
    assert _warnings(caplog) == []
    assert not [th for th in threading.enumerate() if th.name == "graphmind-hold-timeout"]


async def test_an_async_hold_warns_without_blocking_the_loop(
    hub: FakeHub, client: graphmind.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    hub.set_debug(breakpoints=[("tool:search", "after")])

    async def body() -> str:
        return "real"

    task = asyncio.ensure_future(engine_for(client).aexecute(_spec(), body))
    deadline = time.monotonic() + 5
    while not _warnings(caplog):  # the loop keeps running while the gate holds and the timer fires
        assert time.monotonic() < deadline, "no warning"
        await asyncio.sleep(0.01)
    assert not task.done()
    hub.resolve(hub.of_type("exec.paused")[0]["gateId"], "continue")
    assert await asyncio.wait_for(task, 5) == "real"
    assert _warnings(caplog) == [WARNING.replace("before gate", "after gate")]


async def test_a_timeout_that_began_before_the_hold_warns_at_its_deadline_even_when_it_cancels_the_hold(
    hub: FakeHub, client: graphmind.Client, caplog: pytest.LogCaptureFixture
) -> None:
    """A timeout that spans more than the call (a workflow's, from its run's start) gives its start:
    the warning comes at its deadline, also when that timeout itself cancels the held task."""
    caplog.set_level(logging.WARNING, logger="graphmind")
    hub.set_debug(breakpoints=[("tool:search", "before")])
    started = time.monotonic()
    spec = _spec(KnownTimeout(0.3, "the workflow's timeout", "pass timeout=None", started=started))

    async def body() -> str:
        return "real"

    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(engine_for(client).aexecute(spec, body), timeout=0.3)
    assert _warnings(caplog) == [WARNING.replace("(0.2 s)", "(0.3 s)")]
    hub.wait_for(lambda: [r["by"] for r in hub.of_type("exec.resumed")] == ["cancelled"], what="cancelled")


def test_a_gate_closing_while_the_timer_writes_its_warning_returns_after_the_warning_is_out() -> None:
    """The timer thread had begun warning when the gate closed (the timeout cancelling the hold at
    its deadline): closing waits for that warning instead of leaving it to land later."""
    written: list[str] = []
    entered = threading.Event()

    def slow_warn(text: str) -> None:
        entered.set()
        time.sleep(0.2)
        written.append(text)

    watch = HoldTimeouts(slow_warn).watch(
        "tool:search", "before", KnownTimeout(0.01, "the workflow's timeout")
    )
    assert watch is not None
    assert entered.wait(5)
    watch.stop()
    assert len(written) == 1
