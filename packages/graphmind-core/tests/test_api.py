"""The public API's shapes: wrappers, runs, spans, timing."""

from __future__ import annotations

import asyncio
import inspect
import os
import sys

import pytest

import graphmind
from graphmind.adapter import NodeSpec, engine_for
from graphmind.testing import FakeHub


def make_client(hub: FakeHub, **options: object) -> graphmind.Client:
    client = graphmind.Client(app="api", url=hub.url, **options)
    assert client.ready(5)
    return client


def test_wrapping_twice_returns_the_first_wrapper_and_unwrap_undoes_it() -> None:
    client = graphmind.Client(url="ws://127.0.0.1:9/ingest", retry_interval=3600)

    def search(q: str) -> str:
        return q

    once = client.wrap(search)
    assert client.wrap(once) is once
    assert graphmind.unwrap(once) is search
    assert once.__name__ == "search" and inspect.signature(once) == inspect.signature(search)
    client.dispose()


def test_sync_stays_sync_and_async_stays_async() -> None:
    client = graphmind.Client(url="ws://127.0.0.1:9/ingest", retry_interval=3600)

    async def a() -> int:
        return 1

    def s() -> int:
        return 1

    assert inspect.iscoroutinefunction(client.wrap(a))
    assert not inspect.iscoroutinefunction(client.wrap(s))
    client.dispose()


def test_wrap_tools_returns_the_same_shape(hub: FakeHub) -> None:
    client = make_client(hub)

    def one() -> int:
        return 1

    def two() -> int:
        return 2

    wrapped = client.wrap_tools({"first": one, "second": two})
    assert list(wrapped) == ["first", "second"] and wrapped["first"]() == 1
    as_list = client.wrap_tools([one, two])
    assert isinstance(as_list, list) and as_list[1]() == 2
    single = client.wrap_tools(one)
    assert single() == 1
    hub.wait_for(
        lambda: (
            {"tool:first", "tool:two", "tool:one"} <= {e.get("nodeId") for e in hub.of_type("node.finished")}
        )
    )
    with pytest.raises(TypeError, match="wrap_tools"):
        client.wrap_tools(42)
    client.dispose()


def test_input_is_the_bound_arguments_as_a_dict(hub: FakeHub) -> None:
    client = make_client(hub)

    @client.tool("search")
    def search(query: str, limit: int = 5, *tags: str, **filters: str) -> int:
        return limit

    search("a", 3, "x", "y", lang="en")
    search(query="b")
    started = hub.wait_event(lambda e: e["type"] == "node.started" and e["input"].get("query") == "a")
    assert started["input"] == {"query": "a", "limit": 3, "tags": ["x", "y"], "lang": "en"}
    assert hub.wait_event(lambda e: e["type"] == "node.started" and e["input"].get("query") == "b")[
        "input"
    ] == {"query": "b"}
    client.dispose()


def test_wrap_method_gates_one_instance_in_place_and_can_be_undone(hub: FakeHub) -> None:
    client = make_client(hub)

    class Repo:
        def find(self, key: str) -> str:
            return f"found {key}"

    repo, other = Repo(), Repo()
    assert client.wrap_method(repo, "find") is repo
    client.wrap_method(repo, "find")  # twice is harmless
    hub.set_debug(breakpoints=[("tool:find", "before")])
    hub.auto_answer("inject", "injected")
    assert repo.find("k") == "injected"
    assert other.find("k") == "found k"
    client.unwrap_method(repo, "find")
    assert repo.find("k") == "found k"
    assert "find" not in vars(repo)
    client.dispose()


def test_implicit_run_is_shared_by_calls_outside_any_run(hub: FakeHub) -> None:
    client = make_client(hub)
    gated = client.wrap(lambda: 1, name="outside")
    gated()
    gated()
    hub.wait_for(lambda: len(hub.of_type("node.started")) == 2)
    starts = hub.of_type("node.started")
    assert len({e["runId"] for e in starts}) == 1
    runs = hub.of_type("run.started")
    assert len(runs) == 1 and runs[0]["implicit"] is True and runs[0]["name"] == "api"
    client.dispose()
    assert hub.wait_event(lambda e: e["type"] == "run.finished")["runId"] == runs[0]["runId"]


async def test_async_run_decorator_and_nested_parents(hub: FakeHub) -> None:
    client = make_client(hub)
    inner = client.wrap(lambda: "in", name="inner")

    @client.tool("outer")
    async def outer() -> str:
        return inner()

    @client.run("async-agent", meta={"ticket": 7})
    async def agent() -> str:
        assert client.current_run() is not None
        return await outer()

    assert await agent() == "in"
    hub.wait_for(lambda: len(hub.of_type("node.started")) == 2)
    outer_started, inner_started = hub.of_type("node.started")
    assert inner_started["parentInstanceId"] == outer_started["instanceId"]
    run_started = hub.of_type("run.started")[0]
    meta = run_started["meta"]
    assert meta["ticket"] == 7 and run_started["nodeId"] == "agent:async-agent"
    assert meta["argv"] == sys.argv and meta["cwd"] == os.getcwd()  # the command line, for "Fork from here"
    assert meta["executable"] == sys.executable  # the interpreter the fork command runs it with
    await client.adispose()


def test_run_that_raises_finishes_with_error(hub: FakeHub) -> None:
    client = make_client(hub)
    with pytest.raises(KeyError), client.run("failing"):
        raise KeyError("x")
    finished = hub.wait_event(lambda e: e["type"] == "run.finished")
    assert finished["status"] == "error" and finished["error"]["name"] == "KeyError"
    client.dispose()


def test_durations_use_the_injectable_clock_and_count_held_time(hub: FakeHub) -> None:
    now = [1000.0]
    client = make_client(hub, clock=lambda: now[0])

    def body() -> str:
        now[0] += 6.523
        return "ok"

    gated = client.wrap(body, name="timed")
    gated()
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["durationMs"] == 6.52 and finished["heldMs"] == 0

    def hold_answer(_event: dict[str, object]) -> tuple[str, None]:
        now[0] += 100.0  # the person took 100 ms to answer
        return ("continue", None)

    hub.set_debug(breakpoints=[("tool:timed", "before")])
    hub.auto_answer(hold_answer)
    gated()
    hub.wait_for(lambda: len(hub.of_type("node.finished")) == 2)
    second = hub.of_type("node.finished")[1]
    assert second["heldMs"] == 100.0 and second["durationMs"] == 106.52
    client.dispose()


def test_span_streams_tokens_and_sets_output(hub: FakeHub) -> None:
    client = make_client(hub, token_flush_interval=0.0)
    with client.span("think", kind="llm", input={"prompt": "hi"}) as span:
        span.token("Hel")
        span.token("lo")
        span.output = "Hello"
    tokens = hub.wait_event(lambda e: e["type"] == "node.token")
    assert tokens["deltas"][0]["t"] == "text"
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["output"] == "Hello" and finished["nodeId"] == "llm:think"
    client.dispose()


def test_a_span_decorates_a_function_and_each_call_is_a_span_whose_output_is_its_return_value(
    hub: FakeHub,
) -> None:
    client = make_client(hub)

    @client.span("retrieve", kind="retriever", input={"k": 2})
    def retrieve(query: str) -> list[str]:
        return [query, query.upper()]

    @client.span("plan")
    async def plan(goal: str) -> str:
        return f"plan for {goal}"

    with client.run("spans"):
        assert retrieve("doc") == ["doc", "DOC"] and retrieve("faq") == ["faq", "FAQ"]
        assert asyncio.run(plan("trip")) == "plan for trip"
    assert retrieve.__name__ == "retrieve" and inspect.iscoroutinefunction(plan)
    hub.wait_for(lambda: len(hub.of_type("node.finished")) == 3, what="three spans")
    ends = {(e["nodeId"], e["instanceId"]): e["output"] for e in hub.of_type("node.finished")}
    assert sorted(ends.values(), key=str) == [["doc", "DOC"], ["faq", "FAQ"], "plan for trip"]
    assert len({instance for _node, instance in ends}) == 3, "a fresh node per call"
    started = [e for e in hub.of_type("node.started") if e["nodeId"] == "retriever:retrieve"]
    assert [e["input"] for e in started] == [{"k": 2}, {"k": 2}]
    client.dispose()


def test_module_level_api_delegates_to_the_default_client(hub: FakeHub) -> None:
    client = graphmind.configure(app="module", url=hub.url)
    try:
        assert graphmind.get_client() is client
        assert graphmind.ready(5)

        @graphmind.tool
        def ping() -> str:
            return "pong"

        with graphmind.run("module-run") as run:
            assert ping() == "pong"
            assert graphmind.current_run() is run
        assert graphmind.stats()["events"] >= 4
    finally:
        graphmind.dispose()


def test_redaction_switches_and_loop_config_are_visible() -> None:
    client = graphmind.Client(hide_tool_args="true", environ={"GRAPHMIND_HIDE_OUTPUTS": " TRUE "})
    assert client.redaction_switches.hide_tool_args and client.redaction_switches.hide_outputs
    assert client.loop_guard_config.threshold == 3


def test_disposed_client_calls_through() -> None:
    client = graphmind.Client(url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    gated = client.wrap(lambda: 5, name="after-dispose")
    client.dispose()
    assert gated() == 5
    assert asyncio.run(engine_for(client).aexecute(NodeSpec("x"), lambda: asyncio.sleep(0, "y"))) == "y"


def test_tool_call_names_the_tool_node_after_the_models_call_id(hub: FakeHub) -> None:
    client = make_client(hub)
    inner = client.wrap(lambda: 1, name="inner")

    @client.tool("outer")
    def outer() -> int:
        return inner()

    with client.tool_call("call_abc"):
        outer()
    hub.wait_for(lambda: len(hub.of_type("node.started")) == 2)
    first, second = hub.of_type("node.started")
    assert first["instanceId"] == "call_abc"
    assert second["instanceId"] != "call_abc" and second["parentInstanceId"] == "call_abc"
    client.dispose()


def test_the_tail_of_a_paused_stream_is_sent_before_the_step_ends(hub: FakeHub) -> None:
    client = make_client(hub, token_flush_interval=0.05)
    with client.span("think", kind="llm") as span:
        span.token("first")
        span.token(" tail")  # no delta follows: the flusher sends the batch within the interval
        tokens = hub.wait_event(lambda e: e["type"] == "node.token", timeout=2)
        assert not hub.of_type("node.finished")  # while the step is still open
        assert tokens["deltas"] == [{"t": "text", "v": "first tail"}]
    client.dispose()


def test_token_flush_interval_zero_sends_every_delta() -> None:
    assert graphmind.Client(token_flush_interval=0).options.token_flush_interval == 0
