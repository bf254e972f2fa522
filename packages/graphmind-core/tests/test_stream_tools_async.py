"""Streaming tools from async code (issue 16 item 1): an async-generator function stays one, under
asyncio and trio, with the same gates, endings and `streaming: true` / `chunks` as a generator."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio

import graphmind
from graphmind.testing import FakeHub


class Tool:
    """An async-generator tool that records what it produced and whether its generator was closed."""

    def __init__(self, chunks: list[Any], fail_at: int | None = None) -> None:
        self.chunks = chunks
        self.fail_at = fail_at
        self.runs = 0
        self.produced: list[Any] = []
        self.closed = 0

    async def search(self, query: str) -> AsyncIterator[Any]:
        self.runs += 1
        try:
            for i, chunk in enumerate(self.chunks):
                await _checkpoint()
                if i == self.fail_at and self.runs == 1:
                    raise ConnectionError(f"search backend broke at chunk {i}")
                self.produced.append(chunk)
                yield chunk
        except GeneratorExit:
            self.closed += 1
            raise


async def _checkpoint() -> None:
    """Yields to the event loop, whichever library runs it."""
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        await asyncio.sleep(0)
    else:
        await trio.lowlevel.checkpoint()


def ending(hub: FakeHub, node_id: str = "tool:search") -> dict[str, Any]:
    return hub.wait_event(lambda e: e["type"] in ("node.finished", "node.error") and e["nodeId"] == node_id)


async def collect(stream: AsyncIterator[Any]) -> list[Any]:
    return [chunk async for chunk in stream]


@pytest.mark.parametrize("runner", ["asyncio", "trio"])
def test_an_async_generator_tool_stays_one_and_streams_its_chunks(
    hub: FakeHub, client: graphmind.Client, runner: str
) -> None:
    tool = Tool(["Lis", {"n": 1}])
    search = client.tool(tool.search)
    assert inspect.isasyncgenfunction(search)

    async def main() -> list[Any]:
        stream = search("city")
        assert inspect.isasyncgen(stream)
        first = await stream.__anext__()
        assert tool.produced == ["Lis"]  # the second chunk is not produced yet
        return [first] + await collect(stream)

    got = asyncio.run(main()) if runner == "asyncio" else trio.run(main)
    assert got == ["Lis", {"n": 1}]
    done = ending(hub)
    assert done["output"] == ["Lis", {"n": 1}] and done["streaming"] is True and done["chunks"] == 2
    text = "".join(d["v"] for e in hub.of_type("node.token") for d in e["deltas"])
    assert text == 'Lis{"n":1}\n'


def test_before_inject_yields_the_injected_chunks_and_the_tool_never_runs(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer("inject", ["x", "y"])
    tool = Tool(["real"])
    assert asyncio.run(collect(client.wrap(tool.search)("q"))) == ["x", "y"]
    assert tool.runs == 0
    done = ending(hub)
    assert done["injected"] is True and done["chunks"] == 2


def test_an_after_breakpoint_holds_the_exhausted_stream_and_retry_runs_it_again(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(breakpoints=[("tool:search", "after")])
    answers = iter(["retry", "continue"])
    hub.auto_answer(lambda _frame: (next(answers), None))
    tool = Tool(["a", "b"])
    assert trio.run(collect, client.wrap(tool.search)("q")) == ["a", "b"]
    assert tool.runs == 2
    assert [p["output"] for p in hub.of_type("exec.paused")] == [["a", "b"], ["a", "b"]]


def test_an_error_before_any_chunk_is_retried_and_one_after_a_chunk_is_re_raised(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("retry")
    early = Tool(["a", "b"], fail_at=0)
    assert asyncio.run(collect(client.wrap(early.search)("q"))) == ["a", "b"]
    assert early.runs == 2 and ending(hub)["chunks"] == 2

    late = Tool(["a", "b"], fail_at=1)
    received: list[Any] = []

    async def main() -> None:
        async for chunk in client.wrap(late.search, name="late")("q"):
            received.append(chunk)

    with pytest.raises(ConnectionError, match="broke at chunk 1"):
        asyncio.run(main())
    assert received == ["a"] and late.runs == 1
    done = ending(hub, "tool:late")
    assert done["type"] == "node.error" and done["chunks"] == 1
    assert len(hub.of_type("exec.paused")) == 1  # only the early error was gated


@pytest.mark.parametrize("runner", ["asyncio", "trio"])
def test_aclose_finishes_the_node_cut_short_and_closes_the_tools_generator(
    hub: FakeHub, client: graphmind.Client, runner: str
) -> None:
    tool = Tool(["a", "b", "c"])

    async def main() -> None:
        stream = client.wrap(tool.search)("q")
        assert await stream.__anext__() == "a"
        await stream.aclose()

    asyncio.run(main()) if runner == "asyncio" else trio.run(main)
    assert tool.closed == 1 and tool.produced == ["a"]
    done = ending(hub)
    assert done["cutShort"] is True and done["output"] == ["a"] and done["chunks"] == 1


def test_a_cancelled_task_finishes_the_node_cut_short(hub: FakeHub, client: graphmind.Client) -> None:
    async def endless(query: str) -> AsyncIterator[str]:
        while True:
            await asyncio.sleep(0.01)
            yield "tick"

    search = client.wrap(endless, name="search")

    async def main() -> None:
        first = asyncio.Event()

        async def consume() -> None:
            async for _ in search("q"):
                first.set()

        task = asyncio.create_task(consume())
        await first.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    done = ending(hub)
    assert done["cutShort"] is True and done["streaming"] is True and done["chunks"] >= 1


def test_a_run_abort_while_streaming_stops_the_async_tool(hub: FakeHub, client: graphmind.Client) -> None:
    tool = Tool(["a", "b", "c"])
    search = client.wrap(tool.search)

    async def main() -> list[Any]:
        received: list[Any] = []
        async with client.run("trip") as run:
            stream = search("q")
            received.append(await stream.__anext__())
            hub.abort_run(run.run_id)
            await asyncio.wait_for(run.wait_aborted(), 5)
            with pytest.raises(graphmind.RunAborted):
                async for chunk in stream:
                    received.append(chunk)
        return received

    assert asyncio.run(main()) == ["a"]
    assert tool.produced == ["a"] and tool.closed == 1
    assert ending(hub)["error"]["name"] == "RunAborted"


def test_wrap_method_streams_an_async_generator_method(hub: FakeHub, client: graphmind.Client) -> None:
    tool = Tool(["m"])
    client.wrap_method(tool, "search")
    assert inspect.isasyncgenfunction(tool.search)
    assert asyncio.run(collect(tool.search("q"))) == ["m"]
    assert ending(hub)["chunks"] == 1


def test_a_disposed_client_passes_the_tools_chunks_and_aclose_straight_through() -> None:
    client = graphmind.Client(url="ws://127.0.0.1:9/ingest", retry_interval=3600, wait_for_attach=False)
    tool = Tool(["a", "b"])
    wrapped = client.wrap(tool.search)
    client.dispose()

    async def main() -> None:
        assert await collect(wrapped("q")) == ["a", "b"]
        stream = wrapped("q")
        assert await stream.__anext__() == "a"
        await stream.aclose()

    asyncio.run(main())
    assert tool.closed == 1
