"""Streaming tools (issue 16 item 1): a generator function wrapped by `tool` / `wrap` / `wrap_tools` /
`wrap_method` streams its chunks to the caller as `node.token` and finishes `streaming: true`, `chunks`."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import graphmind
from graphmind.testing import FakeHub


class Tool:
    """A generator tool that records what it produced and whether its generator was closed."""

    def __init__(self, chunks: list[Any], fail_at: int | None = None, fail_times: int = 1) -> None:
        self.chunks = chunks
        self.fail_at = fail_at
        self.fail_times = fail_times
        self.runs = 0
        self.produced: list[Any] = []
        self.closed = 0

    def search(self, query: str) -> Iterator[Any]:
        self.runs += 1
        try:
            for i, chunk in enumerate(self.chunks):
                if i == self.fail_at and self.runs <= self.fail_times:
                    raise ConnectionError(f"search backend broke at chunk {i}")
                self.produced.append(chunk)
                yield chunk
        except GeneratorExit:
            self.closed += 1
            raise


def ending(hub: FakeHub, node_id: str = "tool:search") -> dict[str, Any]:
    return hub.wait_event(lambda e: e["type"] in ("node.finished", "node.error") and e["nodeId"] == node_id)


def token_text(hub: FakeHub, node_id: str = "tool:search") -> str:
    return "".join(d["v"] for e in hub.of_type("node.token") if e["nodeId"] == node_id for d in e["deltas"])


def test_a_generator_tool_stays_a_generator_and_each_chunk_reaches_the_caller_as_it_is_produced(
    hub: FakeHub, client: graphmind.Client
) -> None:
    tool = Tool(["Lis", "bon"])
    search = client.tool(tool.search)
    assert inspect.isgeneratorfunction(search)
    stream = search("city")
    assert inspect.isgenerator(stream) and tool.runs == 0  # like the tool itself: nothing runs yet
    assert next(stream) == "Lis" and tool.produced == ["Lis"]  # the second chunk is not produced yet
    assert list(stream) == ["bon"]
    done = ending(hub)
    assert done["type"] == "node.finished" and done["output"] == ["Lis", "bon"]
    assert done["streaming"] is True and done["chunks"] == 2 and "cutShort" not in done
    assert token_text(hub) == "Lisbon"
    started = hub.wait_event(lambda e: e["type"] == "node.started" and e["nodeId"] == "tool:search")
    assert started["input"] == {"query": "city"} and started["kind"] == "tool"


def test_a_chunk_that_is_not_text_is_observed_as_one_json_line(
    hub: FakeHub, client: graphmind.Client
) -> None:
    tool = Tool([{"flight": "TP1", "price": 99.5}, ["a", 1], None, "done"])
    assert list(client.wrap(tool.search)("q")) == tool.chunks
    assert ending(hub)["chunks"] == 4
    assert token_text(hub) == '{"flight":"TP1","price":99.5}\n["a",1]\nnull\ndone'


def test_before_inject_of_a_list_yields_each_element_as_a_chunk_and_the_tool_never_runs(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer("inject", ["from", {"the": "debugger"}])
    tool = Tool(["real"])
    assert list(client.wrap(tool.search)("q")) == ["from", {"the": "debugger"}]
    assert tool.runs == 0
    done = ending(hub)
    assert done["injected"] is True and done["output"] == ["from", {"the": "debugger"}]
    assert done["streaming"] is True and done["chunks"] == 2


@pytest.mark.parametrize("value", ["one answer", {"a": 1}, 7, None])
def test_before_inject_of_anything_but_a_list_yields_it_as_one_chunk(
    hub: FakeHub, client: graphmind.Client, value: Any
) -> None:
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer("inject", value)
    assert list(client.wrap(Tool(["real"]).search)("q")) == [value]
    assert ending(hub)["chunks"] == 1


def test_before_inject_of_an_empty_list_is_a_stream_with_no_chunks(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer("inject", [])
    assert list(client.wrap(Tool(["real"]).search)("q")) == []
    assert ending(hub)["chunks"] == 0


def test_before_abort_raises_run_aborted_and_the_tool_never_runs(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer("abort")
    tool = Tool(["real"])
    with client.run("trip"), pytest.raises(graphmind.RunAborted):
        list(client.wrap(tool.search)("q"))
    assert tool.runs == 0 and ending(hub)["type"] == "node.error"


def test_an_after_breakpoint_holds_once_the_generator_is_exhausted_before_the_caller_sees_a_chunk(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(breakpoints=[("tool:search", "after")])
    tool = Tool(["a", "b"])
    search = client.wrap(tool.search)
    received: list[Any] = []
    consumer = threading.Thread(target=lambda: received.extend(search("q")))
    consumer.start()
    paused = hub.next_paused()
    assert paused["gate"] == "after" and paused["output"] == ["a", "b"]
    assert tool.produced == ["a", "b"] and received == []  # exhausted, and nothing reached the caller
    hub.resolve(paused["gateId"], "continue")
    consumer.join(10)
    assert received == ["a", "b"]
    done = ending(hub)
    assert done["output"] == ["a", "b"] and done["chunks"] == 2 and done["heldMs"] >= 0


def test_after_inject_replaces_the_chunks_and_after_retry_runs_the_tool_again(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(breakpoints=[("tool:search", "after")])
    answers = iter([("retry", None), ("inject", ["x", "y", "z"])])
    hub.auto_answer(lambda _frame: next(answers))
    tool = Tool(["a"])
    assert list(client.wrap(tool.search)("q")) == ["x", "y", "z"]
    assert tool.runs == 2
    done = ending(hub)
    assert done["injected"] is True and done["output"] == ["x", "y", "z"] and done["chunks"] == 3


def test_an_error_before_any_chunk_reached_the_caller_can_be_retried(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("retry")
    tool = Tool(["a", "b"], fail_at=0)
    assert list(client.wrap(tool.search)("q")) == ["a", "b"]
    assert tool.runs == 2
    assert hub.next_paused()["error"]["message"] == "search backend broke at chunk 0"
    assert ending(hub)["chunks"] == 2


def test_an_error_before_any_chunk_can_be_injected_over(hub: FakeHub, client: graphmind.Client) -> None:
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("inject", ["cached", "result"])
    assert list(client.wrap(Tool(["a"], fail_at=0).search)("q")) == ["cached", "result"]
    done = ending(hub)
    assert done["type"] == "node.finished" and done["injected"] is True and done["chunks"] == 2


def test_an_error_after_a_chunk_reached_the_caller_is_re_raised_and_the_node_errors(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("retry")
    tool = Tool(["a", "b"], fail_at=1)
    received: list[Any] = []
    with pytest.raises(ConnectionError, match="broke at chunk 1"):
        for chunk in client.wrap(tool.search)("q"):
            received.append(chunk)
    assert received == ["a"] and tool.runs == 1
    done = ending(hub)
    assert done["type"] == "node.error" and done["error"]["name"] == "ConnectionError"
    assert done["streaming"] is True and done["chunks"] == 1
    assert hub.of_type("exec.paused") == []  # nothing can be taken back: no error gate


def test_breaking_out_early_finishes_the_node_cut_short_and_closes_the_tools_generator(
    hub: FakeHub, client: graphmind.Client
) -> None:
    tool = Tool(["a", "b", "c"])
    for chunk in client.wrap(tool.search)("q"):
        assert chunk == "a"
        break
    assert tool.closed == 1 and tool.produced == ["a"]
    done = ending(hub)
    assert done["type"] == "node.finished" and done["cutShort"] is True
    assert done["output"] == ["a"] and done["chunks"] == 1


def test_a_run_abort_while_streaming_stops_the_tool_before_its_next_chunk(
    hub: FakeHub, client: graphmind.Client
) -> None:
    tool = Tool(["a", "b", "c"])
    search = client.wrap(tool.search)
    received: list[Any] = []
    with client.run("trip") as run:
        stream = search("q")
        received.append(next(stream))
        hub.abort_run(run.run_id)
        assert run.abort_event.wait(5)
        with pytest.raises(graphmind.RunAborted):
            received.extend(stream)
    assert received == ["a"] and tool.produced == ["a"] and tool.closed == 1
    done = ending(hub)
    assert done["type"] == "node.error" and done["error"]["name"] == "RunAborted" and done["chunks"] == 1


def test_wrap_method_and_wrap_tools_stream_generator_tools(hub: FakeHub, client: graphmind.Client) -> None:
    tool = Tool(["m1", "m2"])
    client.wrap_method(tool, "search")
    assert inspect.isgeneratorfunction(tool.search)
    assert list(tool.search("q")) == ["m1", "m2"]
    assert ending(hub)["chunks"] == 2
    client.unwrap_method(tool, "search")
    assert not hasattr(tool.search, "__graphmind_wrapped__")

    tools = client.wrap_tools({"lookup": Tool(["d1"]).search})
    assert list(tools["lookup"]("q")) == ["d1"]
    assert ending(hub, "tool:lookup")["output"] == ["d1"]


def test_a_plain_function_returning_a_generator_is_not_streamed(
    hub: FakeHub, client: graphmind.Client
) -> None:
    def search(query: str) -> Iterator[str]:
        return iter(["a", "b"])

    wrapped = client.wrap(search)
    assert not inspect.isgeneratorfunction(wrapped)
    assert list(wrapped("q")) == ["a", "b"]  # the caller still gets its iterator
    done = ending(hub)
    assert "streaming" not in done and "chunks" not in done


def test_a_plain_function_returning_a_generator_warns_once_and_hands_it_over_untouched(
    hub: FakeHub, client: graphmind.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    pulled: list[str] = []

    def produce() -> Iterator[str]:
        for chunk in ("a", "b"):
            pulled.append(chunk)
            yield chunk

    def search(query: str) -> Iterator[str]:
        return produce()

    async def asearch(query: str) -> AsyncIterator[str]:
        async def agen() -> AsyncIterator[str]:
            yield "c"

        return agen()

    wrapped, awrapped = client.wrap(search), client.wrap(asearch)
    results = [wrapped(f"q{i}") for i in range(3)]  # different arguments: no loop hold
    assert pulled == []  # never run early: the caller decides when (and whether) it is read
    assert [list(r) for r in results] == [["a", "b"]] * 3
    assert asyncio.run(_first(awrapped("q"))) == "c"
    warnings = [r.getMessage() for r in caplog.records if "from a plain function" in r.getMessage()]
    assert warnings == [
        "[graphmind] tool:search returned a generator from a plain function: the caller gets it untouched, "
        "but its items are neither streamed nor recorded; declare the function with `yield` to stream them",
        "[graphmind] tool:asearch returned an async generator from a plain function: the caller gets it "
        "untouched, but its items are neither streamed nor recorded; declare the function with `yield` to "
        "stream them",
    ]


async def _first(awaitable: Any) -> Any:
    async for item in await awaitable:
        return item
    return None


def test_a_gated_call_inside_a_streaming_tool_is_its_child(hub: FakeHub, client: graphmind.Client) -> None:
    @client.tool
    def price(flight: str) -> int:
        return 99

    @client.tool
    def search(query: str) -> Iterator[int]:
        yield price("TP1")

    assert list(search("q")) == [99]
    parent = hub.wait_event(lambda e: e["type"] == "node.started" and e["nodeId"] == "tool:search")
    child = hub.wait_event(lambda e: e["type"] == "node.started" and e["nodeId"] == "tool:price")
    assert child["parentInstanceId"] == parent["instanceId"]


def test_hide_tool_results_hides_the_chunks_and_the_output(hub: FakeHub) -> None:
    client = graphmind.Client(app="hidden", url=hub.url, hide_tool_results=True)
    assert client.ready(5)
    try:
        assert list(client.wrap(Tool(["secret", {"card": "4242"}]).search)("q")) == [
            "secret",
            {"card": "4242"},
        ]
        done = ending(hub)
        assert done["output"] == "__REDACTED__" and done["chunks"] == 2
        deltas = [d for e in hub.of_type("node.token") for d in e["deltas"]]
        assert deltas and all(d["v"] == "" and d["chars"] > 0 for d in deltas)
    finally:
        client.dispose()


def test_detached_the_chunks_pass_through_and_the_node_is_recorded_for_replay() -> None:
    client = graphmind.Client(url="ws://127.0.0.1:9/ingest", retry_interval=3600, wait_for_attach=False)
    tool = Tool(["a", "b"])
    try:
        assert list(client.wrap(tool.search)("q")) == ["a", "b"]
        assert client.stats()["buffered"] >= 3  # started, token, finished wait in the replay ring
    finally:
        client.dispose()


def test_a_disposed_client_calls_the_tool_straight_through_send_and_return_included() -> None:
    client = graphmind.Client(url="ws://127.0.0.1:9/ingest", retry_interval=3600, wait_for_attach=False)

    def echo() -> Iterator[Any]:
        got = yield "first"
        yield f"sent {got}"
        return "the end"

    wrapped = client.wrap(echo)
    client.dispose()
    stream = wrapped()
    assert next(stream) == "first" and stream.send("x") == "sent x"
    with pytest.raises(StopIteration) as stop:
        next(stream)
    assert stop.value.value == "the end"


def test_a_disabled_client_returns_the_generator_function_itself() -> None:
    client = graphmind.Client(enabled=False)
    tool = Tool(["a"])
    assert client.wrap(tool.search) == tool.search


def test_a_hold_if_condition_holds_the_before_gate_and_continue_runs_the_tool(
    hub: FakeHub, client: graphmind.Client
) -> None:
    hub.auto_answer("continue")
    tool = Tool(["a", "b"])
    search = client.tool(hold_if=lambda query: query == "risky" and "a risky query")(tool.search)
    assert list(search("safe")) == ["a", "b"]
    assert hub.of_type("exec.paused") == []
    assert list(search("risky")) == ["a", "b"]
    paused = hub.next_paused()
    assert (paused["gate"], paused["reason"], paused["why"]) == ("before", "condition", "a risky query")
    assert tool.runs == 2


def test_a_chunk_graphmind_cannot_render_is_left_out_of_the_tokens_not_the_tools_error(
    hub: FakeHub, client: graphmind.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import graphmind._api.stream_tools as stream_tools

    def chunk_text(chunk: Any) -> str:
        if chunk == "bad":
            raise ValueError("cannot render this chunk")
        return str(chunk)

    monkeypatch.setattr(stream_tools, "chunk_text", chunk_text)
    tool = Tool(["a", "bad", "c"])
    assert list(client.wrap(tool.search)("q")) == ["a", "bad", "c"]
    done = ending(hub)
    assert done["type"] == "node.finished" and done["chunks"] == 3
    assert token_text(hub) == "ac"
