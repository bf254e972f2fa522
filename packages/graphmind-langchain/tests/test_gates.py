"""gate_tools / gate_model against graphmind.testing.FakeHub: inject, retry, streams, undo."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForToolRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

import graphmind
from graphmind.testing import FakeHub
from graphmind_langchain import GraphmindCallbackHandler, gate_model, gate_tools, ungate_model, ungate_tools
from graphmind_langchain._registry import MARK


def of(hub: FakeHub, event_type: str, node_id: str | None = None) -> list[dict[str, Any]]:
    return [e for e in hub.of_type(event_type) if node_id is None or e.get("nodeId") == node_id]


def make_search(calls: list[str]) -> Any:
    @tool
    def search(query: str) -> str:
        """Search the web."""
        calls.append(query)
        return f"results for {query}"

    return search


def make_asearch(calls: list[str]) -> Any:
    @tool
    async def search(query: str) -> str:
        """Search the web."""
        calls.append(query)
        return f"results for {query}"

    return search


# ---- shape, idempotence, undo ------------------------------------------------------------------
def test_gate_tools_returns_the_same_shape_in_place(client: graphmind.Client) -> None:
    a, b = make_search([]), make_search([])
    tools = [a, b]
    assert gate_tools(tools, session=client) is tools
    assert gate_tools(a, session=client) is a
    as_dict = {"a": a}
    assert gate_tools(as_dict, session=client) is as_dict
    assert "_run" in a.__dict__ and MARK in a.metadata


def test_gating_twice_wraps_once_and_ungate_restores_everything(client: graphmind.Client) -> None:
    search = make_search([])
    search.metadata = {"team": "x"}
    gate_tools(search, session=client)
    first = search.__dict__["_run"]
    gate_tools(search, session=client)
    assert search.__dict__["_run"] is first
    ungate_tools(search)
    assert "_run" not in search.__dict__ and "_arun" not in search.__dict__
    assert search.metadata == {"team": "x"}
    ungate_tools(search)  # a second undo does nothing


def test_gate_tools_refuses_a_plain_function_with_a_clear_message(client: graphmind.Client) -> None:
    with pytest.raises(TypeError, match="turn plain functions into tools"):
        gate_tools([lambda q: q], session=client)


def test_a_disabled_client_leaves_tools_and_models_untouched(fake_model: Any) -> None:
    client = graphmind.Client(app="off", enabled=False)
    search, model = make_search([]), fake_model(responses=[AIMessage("a")])
    gate_tools(search, session=client)
    gate_model(model, session=client)
    assert "_run" not in search.__dict__ and "_generate_with_cache" not in model.__dict__


# ---- tools -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["sync tool", "sync tool via ainvoke", "async tool"])
async def test_before_inject_skips_the_tool_body(hub: FakeHub, client: graphmind.Client, kind: str) -> None:
    calls: list[str] = []
    search = make_asearch(calls) if kind == "async tool" else make_search(calls)
    gate_tools(search, session=client)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer("inject", "injected")
    result = search.invoke({"query": "x"}) if kind == "sync tool" else await search.ainvoke({"query": "x"})
    assert result == "injected" and calls == []
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["injected"] is True and len(of(hub, "node.started")) == 1


async def test_after_inject_replaces_the_result(hub: FakeHub, client: graphmind.Client) -> None:
    calls: list[str] = []
    search = gate_tools(make_search(calls), session=client)
    hub.set_debug(breakpoints=[("tool:search", "after")])
    hub.auto_answer("inject", "replaced")
    assert search.invoke({"query": "x"}) == "replaced" and calls == ["x"]
    paused = hub.next_paused()
    assert paused["output"] == "results for x"


@pytest.mark.parametrize("path", ["sync", "async"])
async def test_error_retry_runs_the_tool_again(hub: FakeHub, client: graphmind.Client, path: str) -> None:
    attempts: list[str] = []

    @tool
    def flaky(query: str) -> str:
        """Fails the first time."""
        attempts.append(query)
        if len(attempts) == 1:
            raise RuntimeError("upstream timeout")
        return "ok"

    gate_tools(flaky, session=client)
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("retry")
    result = flaky.invoke({"query": "x"}) if path == "sync" else await flaky.ainvoke({"query": "x"})
    assert result == "ok" and attempts == ["x", "x"]
    assert hub.next_paused()["error"]["message"] == "upstream timeout"


def test_the_tool_still_gets_its_config_and_a_tool_without_run_manager_works(
    hub: FakeHub, client: graphmind.Client
) -> None:
    seen: list[Any] = []

    @tool
    def configured(query: str, config: RunnableConfig) -> str:
        """Reads its config."""
        seen.append(config.get("metadata", {}).get("who"))
        return query

    class Plain(BaseTool):
        name: str = "plain"
        description: str = "no run_manager in _run"

        def _run(self, query: str) -> str:
            return query.upper()

    class WithManager(BaseTool):
        name: str = "managed"
        description: str = "takes run_manager"

        def _run(self, query: str, run_manager: CallbackManagerForToolRun | None = None) -> str:
            seen.append(run_manager is not None)
            return query

    tools = gate_tools([configured, Plain(), WithManager()], session=client)
    assert tools[0].invoke({"query": "q"}, config={"metadata": {"who": "me"}}) == "q"
    assert tools[1].invoke({"query": "q"}) == "Q"
    assert tools[2].invoke({"query": "q"}) == "q"
    assert seen == ["me", True]


def test_with_the_handler_one_tool_call_is_one_node_and_it_can_inject(
    hub: FakeHub, client: graphmind.Client
) -> None:
    calls: list[str] = []
    search = gate_tools(make_search(calls), session=client)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer("inject", "from the debugger")
    out = search.invoke({"query": "x"}, config={"callbacks": [GraphmindCallbackHandler(client)]})
    assert out == "from the debugger" and calls == []
    hub.wait_event(lambda e: e["type"] == "node.finished")
    assert len(of(hub, "node.started")) == 1
    assert hub.next_paused()["actions"] == ["continue", "inject", "abort"]


# ---- models ------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["sync", "async"])
async def test_a_model_reply_can_be_injected_as_text_or_with_tool_calls(
    hub: FakeHub, client: graphmind.Client, fake_model: Any, path: str
) -> None:
    model = gate_model(fake_model(responses=[AIMessage("real")]), session=client)
    hub.set_debug(breakpoints=[("llm:step", "before")])
    value = {"content": "", "tool_calls": [{"name": "search", "args": {"query": "cats"}, "id": "call_9"}]}
    hub.auto_answer("inject", value)
    reply = model.invoke("hi") if path == "sync" else await model.ainvoke("hi")
    assert reply.tool_calls == [
        {"name": "search", "args": {"query": "cats"}, "id": "call_9", "type": "tool_call"}
    ]
    hub.auto_answer("inject", "just text")
    reply = model.invoke("hi") if path == "sync" else await model.ainvoke("hi")
    assert reply.content == "just text"


def test_a_wrong_shaped_model_inject_holds_the_gate_again(
    hub: FakeHub, client: graphmind.Client, fake_model: Any
) -> None:
    model = gate_model(fake_model(responses=[AIMessage("real")]), session=client)
    hub.set_debug(breakpoints=[("llm:step", "before")])
    answers = iter([("inject", 42), ("inject", "fine")])
    hub.auto_answer(lambda frame: next(answers))
    assert model.invoke("hi").content == "fine"
    assert len(of(hub, "exec.paused")) == 2


def test_gate_model_accepts_a_bound_model_and_returns_it(client: graphmind.Client, fake_model: Any) -> None:
    model = fake_model(responses=[AIMessage("a")])
    metadata = model.metadata
    bound = model.bind_tools([make_search([])])
    assert gate_model(bound, session=client) is bound
    assert "_generate_with_cache" in model.__dict__
    ungate_model(bound)
    assert "_generate_with_cache" not in model.__dict__ and model.metadata is metadata


@pytest.mark.parametrize("path", ["sync", "async"])
async def test_a_streamed_model_can_be_injected_and_streams_tokens_without_the_handler(
    hub: FakeHub, client: graphmind.Client, path: str
) -> None:
    model = gate_model(
        GenericFakeChatModel(messages=iter([AIMessage("one two"), AIMessage("three four")])), session=client
    )
    if path == "sync":
        assert "".join(c.content for c in model.stream("hi")) == "one two"
    else:
        assert "".join([c.content async for c in model.astream("hi")]) == "one two"
    hub.wait_event(lambda e: e["type"] == "node.finished")
    assert "".join(d["v"] for e in of(hub, "node.token") for d in e["deltas"]) == "one two"
    hub.set_debug(breakpoints=[("llm:step", "before")])
    hub.auto_answer("inject", "injected reply")
    if path == "sync":
        assert "".join(c.content for c in model.stream("hi")) == "injected reply"
    else:
        assert "".join([c.content async for c in model.astream("hi")]) == "injected reply"


def test_an_after_breakpoint_on_a_stream_can_replace_it(hub: FakeHub, client: graphmind.Client) -> None:
    model = gate_model(GenericFakeChatModel(messages=iter([AIMessage("one two")])), session=client)
    handler = GraphmindCallbackHandler(client)
    hub.set_debug(breakpoints=[("llm:step", "after")])
    hub.auto_answer("inject", "better")
    assert "".join(c.content for c in model.stream("hi", config={"callbacks": [handler]})) == "better"
    assert hub.next_paused()["output"] == {"content": "one two"}
    hub.wait_event(lambda e: e["type"] == "node.finished")
    assert len(of(hub, "node.started")) == 1


def test_a_stream_closed_early_still_finishes_its_node(hub: FakeHub, client: graphmind.Client) -> None:
    model = gate_model(GenericFakeChatModel(messages=iter([AIMessage("a b c d e f")])), session=client)
    stream = model.stream("hi")
    next(stream)
    stream.close()
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["cutShort"] is True


def test_invoke_with_streaming_under_the_handler_is_one_node(hub: FakeHub, client: graphmind.Client) -> None:
    model = gate_model(GenericFakeChatModel(messages=iter([AIMessage("x y")])), session=client)
    # stream=True sends invoke down _generate_with_cache's streaming branch (self._stream inside)
    assert (
        model.invoke("hi", config={"callbacks": [GraphmindCallbackHandler(client)]}, stream=True).content
        == "x y"
    )
    hub.wait_event(lambda e: e["type"] == "node.finished")
    assert len(of(hub, "node.started")) == 1
    assert "".join(d["v"] for e in of(hub, "node.token") for d in e["deltas"]) == "x y"


async def test_astream_under_the_handler_is_one_node_and_can_be_injected(
    hub: FakeHub, client: graphmind.Client
) -> None:
    from graphmind_langchain import _registry

    model = gate_model(GenericFakeChatModel(messages=iter([AIMessage("one two")])), session=client)
    handler = GraphmindCallbackHandler(client)
    hub.set_debug(breakpoints=[("llm:step", "before")])
    hub.auto_answer("inject", "steered")
    chunks = [c.content async for c in model.astream("hi", config={"callbacks": [handler]})]
    assert "".join(chunks) == "steered"
    hub.wait_event(lambda e: e["type"] == "node.finished")
    assert len(of(hub, "node.started")) == 1 and of(hub, "node.finished")[0]["injected"] is True
    assert handler._links == {} and _registry._offers == {}
