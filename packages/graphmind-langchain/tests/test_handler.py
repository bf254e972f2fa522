"""GraphmindCallbackHandler against graphmind.testing.FakeHub."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from typing import Any

import langchain_core
import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import tool

import graphmind
from graphmind import RunAborted
from graphmind.adapter import engine_for
from graphmind.testing import FakeHub
from graphmind_langchain import GraphmindCallbackHandler
from graphmind_langchain._dual import dual
from graphmind_langchain._handler import GraphmindCallbackHandler as _H


def of(hub: FakeHub, event_type: str, node_id: str | None = None) -> list[dict[str, Any]]:
    return [e for e in hub.of_type(event_type) if node_id is None or e.get("nodeId") == node_id]


def make_search(calls: list[str]) -> Any:
    @tool
    def search(query: str) -> str:
        """Search the web."""
        calls.append(query)
        return f"results for {query}"

    return search


def agent_for(fake_model: Any, tools: list[Any], replies: list[AIMessage]) -> Any:
    from langgraph.prebuilt import create_react_agent

    with warnings.catch_warnings():  # langgraph 1.x deprecates it in favour of langchain.agents.create_agent
        warnings.simplefilter("ignore")
        return create_react_agent(fake_model(responses=replies), tools)


def tool_call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def test_an_agent_run_is_one_run_with_model_steps_and_tool_calls_as_children(
    hub: FakeHub, client: graphmind.Client, fake_model: Any
) -> None:
    calls: list[str] = []
    agent = agent_for(
        fake_model, [make_search(calls)], [tool_call("search", "c1", query="q"), AIMessage("done")]
    )
    handler = GraphmindCallbackHandler(client)
    out = agent.invoke({"messages": [HumanMessage("hi")]}, config={"callbacks": [handler]})
    assert out["messages"][-1].content == "done" and calls == ["q"]
    assert handler._links == {}  # nothing kept once the run is over
    hub.wait_event(lambda e: e["type"] == "run.finished")
    run = of(hub, "run.started")[0]
    assert run["nodeId"] == "agent:LangGraph" and run["implicit"] is False
    steps = of(hub, "node.started", "llm:step")
    assert [s["instanceId"].split(":")[1] for s in steps] == ["s1", "s2"]
    assert steps[0]["instanceId"].split(":")[0] == steps[1]["instanceId"].split(":")[0]
    tool_started = of(hub, "node.started", "tool:search")[0]
    assert tool_started["input"] == {"query": "q"}
    if int(langchain_core.__version__.split(".")[0]) >= 1:  # 0.3 does not pass tool_call_id to on_tool_start
        assert tool_started["instanceId"] == "c1"
    assert {e["parentInstanceId"] for e in [*steps, tool_started]} == {run["runId"]}
    assert of(hub, "node.finished", "tool:search")[0]["output"] == "results for q"
    assert of(hub, "node.finished", "llm:step")[0]["output"]["tool_calls"] == [
        {"name": "search", "args": {"query": "q"}, "id": "c1"}
    ]
    hint = of(hub, "graph.hint")[0]
    assert hint["nodes"] == [{"nodeId": "tool:search", "kind": "tool", "name": "search"}]
    assert of(hub, "run.finished")[0]["status"] == "finished"


def test_streamed_tokens_arrive_as_node_token_and_usage_on_finish(
    hub: FakeHub, client: graphmind.Client
) -> None:
    reply = AIMessage(
        content="one two three", usage_metadata={"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}
    )
    model = GenericFakeChatModel(messages=iter([reply]))
    chunks = list(model.stream("hi", config={"callbacks": [GraphmindCallbackHandler(client)]}))
    assert "".join(c.content for c in chunks) == "one two three"
    hub.wait_event(lambda e: e["type"] == "node.finished")
    text = "".join(d["v"] for e in of(hub, "node.token") for d in e["deltas"] if d["t"] == "text")
    assert text == "one two three"


def test_usage_is_reported_on_the_model_node(hub: FakeHub, client: graphmind.Client, fake_model: Any) -> None:
    reply = AIMessage(content="hi", usage_metadata={"input_tokens": 5, "output_tokens": 3, "total_tokens": 8})
    fake_model(responses=[reply]).invoke("hello", config={"callbacks": [GraphmindCallbackHandler(client)]})
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["usage"] == {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}
    assert finished["output"] == {"content": "hi"}


def test_a_before_breakpoint_holds_a_sync_tool_call_until_continue(
    hub: FakeHub, client: graphmind.Client
) -> None:
    calls: list[str] = []
    search = make_search(calls)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    result: list[Any] = []
    worker = threading.Thread(
        target=lambda: result.append(
            search.invoke({"query": "x"}, config={"callbacks": [GraphmindCallbackHandler(client)]})
        )
    )
    worker.start()
    paused = hub.next_paused()
    assert calls == [] and worker.is_alive()
    assert paused["actions"] == ["continue", "abort"]  # no callback can substitute a result
    hub.resolve(paused["gateId"], "continue")
    worker.join(5)
    assert result == ["results for x"] and calls == ["x"]


@pytest.mark.parametrize("path", ["sync", "async"])
async def test_abort_at_a_handler_gate_raises_run_aborted_and_the_tool_never_runs(
    hub: FakeHub, client: graphmind.Client, path: str
) -> None:
    calls: list[str] = []
    search = make_search(calls)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer("abort")
    config: Any = {"callbacks": [GraphmindCallbackHandler(client)]}
    with pytest.raises(RunAborted):
        if path == "sync":
            await asyncio.to_thread(search.invoke, {"query": "x"}, config)
        else:
            await search.ainvoke({"query": "x"}, config)
    assert calls == []
    failed = hub.wait_event(lambda e: e["type"] == "node.error" and e["nodeId"] == "tool:search")
    assert failed["error"]["name"] == "RunAborted"


async def test_twenty_held_async_tool_calls_do_not_block_the_event_loop(
    hub: FakeHub, client: graphmind.Client
) -> None:
    calls: list[str] = []

    @tool
    async def search(query: str) -> str:
        """Search."""
        calls.append(query)
        return query

    hub.set_debug(breakpoints=[("tool:search", "before")])
    handler = GraphmindCallbackHandler(client)
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    tick_task = asyncio.create_task(ticker())
    tasks = [
        asyncio.create_task(search.ainvoke({"query": str(i)}, config={"callbacks": [handler]}))
        for i in range(20)
    ]
    deadline = time.monotonic() + 10
    while len(of(hub, "exec.paused")) < 20:
        assert time.monotonic() < deadline, "not every call reached its gate"
        await asyncio.sleep(0.01)
    before = ticks
    await asyncio.sleep(0.1)
    assert ticks - before >= 5 and calls == []  # the loop runs while all 20 hold
    for paused in of(hub, "exec.paused"):
        await asyncio.to_thread(hub.resolve, paused["gateId"], "continue")
    assert sorted(await asyncio.gather(*tasks)) == sorted(str(i) for i in range(20))
    stop.set()
    await tick_task


def test_async_path_gets_the_coroutine_variant() -> None:
    """LangChain's async path looks methods up from a coroutine (manager.py, _ahandle_event_for_handler)."""
    import inspect

    from langchain_core.callbacks import manager

    assert inspect.iscoroutinefunction(manager._ahandle_event_for_handler)
    assert not inspect.iscoroutinefunction(manager.handle_event)
    handler = GraphmindCallbackHandler()
    assert not inspect.iscoroutinefunction(handler.on_tool_start)

    async def lookup() -> Any:
        return handler.on_tool_start

    assert inspect.iscoroutinefunction(asyncio.run(lookup()))
    assert isinstance(_H.__dict__["on_chat_model_start"], dual)


def test_a_failure_inside_the_handler_fails_open(
    hub: FakeHub, client: graphmind.Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("boom")

    monkeypatch.setattr(engine_for(client), "start_node", broken)
    calls: list[str] = []
    search = make_search(calls)
    assert (
        search.invoke({"query": "x"}, config={"callbacks": [GraphmindCallbackHandler(client)]})
        == "results for x"
    )
    assert "on_tool_start" in caplog.text and "boom" in caplog.text


def test_a_retriever_is_a_node(hub: FakeHub, client: graphmind.Client) -> None:
    class Docs(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return [Document(page_content=f"about {query}", metadata={"id": 1})]

    Docs().invoke("cats", config={"callbacks": [GraphmindCallbackHandler(client)]})
    finished = hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "retriever:Docs")
    assert finished["output"] == [{"page_content": "about cats", "metadata": {"id": 1}}]


def test_inside_a_graphmind_run_nodes_join_that_run(
    hub: FakeHub, client: graphmind.Client, fake_model: Any
) -> None:
    handler = GraphmindCallbackHandler(client)
    with client.run("my-loop") as run:
        fake_model(responses=[AIMessage("a")]).invoke("x", config={"callbacks": [handler]})
        make_search([]).invoke({"query": "y"}, config={"callbacks": [handler]})
    hub.wait_for(lambda: len(of(hub, "node.finished")) == 2)
    started = of(hub, "node.started")
    assert {e["runId"] for e in started} == {run.run_id} and len(started) == 2


def test_a_disabled_client_makes_the_handler_a_no_op(fake_model: Any) -> None:
    client = graphmind.Client(app="off", enabled=False)
    out = fake_model(responses=[AIMessage("a")]).invoke(
        "x", config={"callbacks": [GraphmindCallbackHandler(client)]}
    )
    assert out.content == "a" and client.stats()["events"] == 0


def test_a_langgraph_run_takes_the_graphs_name(
    hub: FakeHub, client: graphmind.Client, fake_model: Any
) -> None:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.prebuilt import create_react_agent

    class State(TypedDict):
        n: int

    graph = StateGraph(State)
    graph.add_node("add", lambda s: {"n": s["n"] + 1})
    graph.add_edge(START, "add")
    graph.add_edge("add", END)
    handler = GraphmindCallbackHandler(client)
    graph.compile(name="order-bot").invoke({"n": 1}, config={"callbacks": [handler]})
    graph.compile(name="order-bot").invoke({"n": 1}, config={"callbacks": [handler], "run_name": "ticket-42"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(fake_model(responses=[AIMessage("done")]), [], name="support-agent")
    agent.invoke({"messages": [HumanMessage("hi")]}, config={"callbacks": [handler]})
    hub.wait_for(lambda: len(of(hub, "run.finished")) == 3, what="three runs finished")
    assert [r["name"] for r in of(hub, "run.started")] == ["order-bot", "ticket-42", "support-agent"]
