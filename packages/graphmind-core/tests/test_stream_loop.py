"""`NodeExecution.stream_sync` / `stream_async`: the gates around a stream the app reads item by item."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import graphmind
from graphmind.adapter import NodeExecution, NodeSpec, engine_for
from graphmind.testing import FakeHub


class Source:
    """A streamed call: yields its pieces; `fail_first` opens fail, `fail_after` fails mid-stream."""

    def __init__(self, pieces: list[str], fail_first: int = 0, fail_after: int | None = None) -> None:
        self.pieces = pieces
        self.fail_first = fail_first
        self.fail_after = fail_after
        self.opened = 0

    def open(self) -> Iterator[str]:
        self.opened += 1
        if self.opened <= self.fail_first:
            raise ConnectionError("model overloaded")
        return self._gen()

    def _gen(self) -> Iterator[str]:
        for i, piece in enumerate(self.pieces):
            if self.fail_after is not None and i == self.fail_after:
                raise ConnectionError("stream broke")
            yield piece

    async def aopen(self) -> AsyncIterator[str]:
        for piece in self.open():
            await asyncio.sleep(0)
            yield piece


def describe(items: list[str]) -> tuple[Any, dict[str, Any] | None]:
    return {"text": "".join(items)}, {"outputTokens": len(items)}


def node(client: graphmind.Client) -> NodeExecution:
    return engine_for(client).start_node(NodeSpec("step", "llm", {"prompt": "hi"}, node_id="llm:step"))


def finished(hub: FakeHub) -> dict[str, Any]:
    return hub.wait_event(
        lambda e: e["type"] in ("node.finished", "node.error") and e["nodeId"] == "llm:step"
    )


def test_items_pass_through_and_the_node_finishes_with_their_description(
    hub: FakeHub, client: graphmind.Client
) -> None:
    seen: list[str] = []
    got = list(node(client).stream_sync(Source(["a", "b", "c"]).open, on_item=seen.append, describe=describe))
    assert got == ["a", "b", "c"] and seen == got
    done = finished(hub)
    assert done["output"] == {"text": "abc"} and done["usage"] == {"outputTokens": 3}
    assert hub.of_type("exec.paused") == []


def test_before_inject_never_opens_the_stream(hub: FakeHub, client: graphmind.Client) -> None:
    hub.set_debug(breakpoints=[("llm:step", "before")])
    hub.auto_answer("inject", "from the debugger")
    source = Source(["a"])
    got = list(node(client).stream_sync(source.open, from_injected=lambda v: f"<{v}>", describe=describe))
    assert got == ["<from the debugger>"] and source.opened == 0
    done = finished(hub)
    assert done["output"] == "from the debugger" and done["injected"] is True


def test_an_after_breakpoint_buffers_the_stream_so_inject_can_replace_it(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(breakpoints=[("llm:step", "after")])
    hub.auto_answer("inject", "replaced")
    got = list(node(client).stream_sync(Source(["a", "b"]).open, from_injected=str.upper, describe=describe))
    assert got == ["REPLACED"]  # nothing of the real stream reached the app
    assert hub.of_type("exec.paused")[0]["output"] == {"text": "ab"}


def test_an_after_breakpoint_retry_runs_the_stream_again(hub: FakeHub, client: graphmind.Client) -> None:
    hub.set_debug(breakpoints=[("llm:step", "after")])
    answers = iter(["retry", "continue"])
    hub.auto_answer(lambda _f: (next(answers), None))
    source = Source(["x", "y"])
    assert list(node(client).stream_sync(source.open, describe=describe)) == ["x", "y"]
    assert source.opened == 2


def test_an_error_before_anything_was_sent_can_be_retried(hub: FakeHub, client: graphmind.Client) -> None:
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("retry")
    source = Source(["ok"], fail_first=1)
    assert list(node(client).stream_sync(source.open, describe=describe)) == ["ok"]
    assert source.opened == 2
    assert hub.of_type("exec.paused")[0]["error"]["message"] == "model overloaded"


def test_an_error_after_items_reached_the_app_is_not_gated(hub: FakeHub, client: graphmind.Client) -> None:
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("retry")
    got: list[str] = []
    with pytest.raises(ConnectionError, match="stream broke"):
        for item in node(client).stream_sync(Source(["a", "b"], fail_after=1).open, describe=describe):
            got.append(item)
    assert got == ["a"]
    assert finished(hub)["type"] == "node.error"
    assert hub.of_type("exec.paused") == []


def test_a_stream_closed_early_finishes_cut_short(hub: FakeHub, client: graphmind.Client) -> None:
    stream = node(client).stream_sync(Source(["a", "b", "c"]).open, describe=describe)
    assert next(stream) == "a"
    stream.close()
    done = finished(hub)
    assert done["cutShort"] is True and done["output"] == {"text": "a"}


def test_abort_at_the_before_gate_raises_run_aborted(hub: FakeHub, client: graphmind.Client) -> None:
    hub.set_debug(breakpoints=[("llm:step", "before")])
    hub.auto_answer("abort")
    with client.run("r"), pytest.raises(graphmind.RunAborted):
        list(node(client).stream_sync(Source(["a"]).open))


def test_async_streams_take_the_same_gates(hub: FakeHub, client: graphmind.Client) -> None:
    hub.set_debug(breakpoints=[("llm:step", "after")], pause_on_error="on")
    answers = iter(["retry", "retry", "continue"])  # the error gate, then the after gate twice
    hub.auto_answer(lambda _f: (next(answers), None))
    source = Source(["p", "q"], fail_first=1)

    async def main() -> list[str]:
        return [item async for item in node(client).stream_async(source.aopen, describe=describe)]

    assert asyncio.run(main()) == ["p", "q"]
    assert source.opened == 3
    gates = [e["gate"] for e in hub.of_type("exec.paused")]
    assert gates == ["error", "after", "after"]


def test_an_async_stream_whose_task_is_cancelled_finishes_cut_short(
    hub: FakeHub, client: graphmind.Client
) -> None:
    async def endless() -> AsyncIterator[str]:
        while True:
            await asyncio.sleep(0.01)
            yield "tick"

    async def main() -> None:
        async def consume() -> None:
            async for _ in node(client).stream_async(endless, describe=describe):
                pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert finished(hub)["cutShort"] is True
