"""instrument_llamaindex against FakeHub: agents, steps, LLM and tool nodes, retrievers, query engines."""

from __future__ import annotations

from typing import Any

import pytest
from li_fixtures import make_search, of
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.instrumentation import get_dispatcher

import graphmind
from graphmind.testing import FakeHub
from graphmind_llamaindex import gate_llm, gate_tools, instrument_llamaindex, uninstrument_llamaindex
from graphmind_llamaindex.testing import HashEmbedding, ScriptedFunctionCallingLLM, tool_call

DOCS = ["Cairo is the capital of Egypt.", "Paris has the Eiffel tower.", "Flights to Cairo leave daily."]


def agent_llm() -> ScriptedFunctionCallingLLM:
    return ScriptedFunctionCallingLLM(
        [{"content": "", "tool_calls": [tool_call("search", "call_1", query="cairo")]}, "Cairo it is."],
        usage={"prompt_tokens": 7, "completion_tokens": 2},
    )


def by_node(hub: FakeHub, event_type: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for e in of(hub, event_type):
        out.setdefault(e["nodeId"], []).append(e)
    return out


def test_instrument_is_idempotent_and_uninstrument_restores_the_dispatchers_lists(
    client: graphmind.Client,
) -> None:
    root = get_dispatcher()
    spans, events = list(root.span_handlers), list(root.event_handlers)
    span_list, event_list = root.span_handlers, root.event_handlers
    assert instrument_llamaindex(client) is True
    assert instrument_llamaindex(client) is True
    assert len(root.span_handlers) == len(spans) + 1 and len(root.event_handlers) == len(events) + 1
    uninstrument_llamaindex()
    assert root.span_handlers == spans and root.event_handlers == events
    assert root.span_handlers is span_list and root.event_handlers is event_list
    uninstrument_llamaindex()  # a second undo does nothing


def test_a_disabled_client_adds_nothing_and_starts_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    monkeypatch.setenv("GRAPHMIND_DISABLED", "1")
    before = threading.active_count()
    root = get_dispatcher()
    spans = list(root.span_handlers)
    assert instrument_llamaindex(graphmind.Client(app="off")) is False
    assert root.span_handlers == spans and threading.active_count() == before


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_function_agent_is_a_run_of_steps_llm_steps_and_tools(
    hub: FakeHub, client: graphmind.Client, streaming: bool
) -> None:
    instrument_llamaindex(client)
    calls: list[str] = []
    agent = FunctionAgent(tools=[make_search(calls)], llm=agent_llm(), streaming=streaming)
    result = await agent.run("Where to?")
    assert str(result) == "Cairo it is." and calls == ["cairo"]
    hub.wait_event(lambda e: e["type"] == "run.finished")
    run = of(hub, "run.started")[0]
    assert run["name"] == "Agent"
    started, finished = by_node(hub, "node.started"), by_node(hub, "node.finished")
    assert {"chain:init_run", "chain:run_agent_step", "chain:call_tool"} <= set(started)
    steps = {e["instanceId"]: e for e in started["chain:run_agent_step"]}
    llm_steps = started["llm:step"]
    assert [e["instanceId"].rsplit(":", 1)[1] for e in llm_steps] == ["s1", "s2"]
    assert all(e["parentInstanceId"] in steps for e in llm_steps)
    assert llm_steps[0]["input"]["tools"] == ["search"]
    tool = started["tool:search"][0]
    assert tool["instanceId"] == "call_1" and tool["input"] == {"query": "cairo"}
    assert tool["parentInstanceId"] in {e["instanceId"] for e in started["chain:call_tool"]}
    first, last = finished["llm:step"]
    assert first["output"]["tool_calls"] == [
        {"id": "call_1", "name": "search", "arguments": {"query": "cairo"}}
    ]
    assert last["output"] == {"content": "Cairo it is."}
    assert last["usage"] == {"inputTokens": 7, "outputTokens": 2, "totalTokens": 9}
    assert finished["tool:search"][0]["output"] == {"content": "results for cairo"}
    if streaming:
        hub.wait_for(
            lambda: "".join(d["v"] for e in of(hub, "node.token") for d in e["deltas"]) == "Cairo it is."
        )


async def test_gated_and_instrumented_each_call_is_one_node(hub: FakeHub, client: graphmind.Client) -> None:
    instrument_llamaindex(client)
    tools = gate_tools([make_search([])], session=client)
    agent = FunctionAgent(tools=tools, llm=gate_llm(agent_llm(), session=client))
    await agent.run("Where to?")
    hub.wait_event(lambda e: e["type"] == "run.finished")
    started = by_node(hub, "node.started")
    assert len(started["llm:step"]) == 2 and len(started["tool:search"]) == 1
    assert started["tool:search"][0]["instanceId"] == "call_1"
    assert started["tool:search"][0]["parentInstanceId"] in {
        e["instanceId"] for e in started["chain:call_tool"]
    }
    assert all(
        e["parentInstanceId"] in {s["instanceId"] for s in started["chain:run_agent_step"]}
        for e in started["llm:step"]
    )
    assert len(by_node(hub, "node.finished")["llm:step"]) == 2


async def test_an_agent_inside_a_graphmind_run_is_an_agent_node_of_that_run(
    hub: FakeHub, client: graphmind.Client
) -> None:
    instrument_llamaindex(client)
    agent = FunctionAgent(name="planner", tools=[make_search([])], llm=agent_llm())
    async with client.run("trip") as run:
        await agent.run("Where to?")
    hub.wait_for(lambda: bool(of(hub, "run.finished")), what="the run's end")
    started = by_node(hub, "node.started")
    node = started["agent:planner"][0]
    assert node["runId"] == run.run_id and node["parentInstanceId"] == run.run_id
    assert all(e["runId"] == run.run_id for e in of(hub, "node.started"))
    assert started["chain:init_run"][0]["parentInstanceId"] == node["instanceId"]


def test_a_retriever_and_a_query_engine_show_the_nodes_with_their_scores(
    hub: FakeHub, client: graphmind.Client
) -> None:
    instrument_llamaindex(client)
    index = VectorStoreIndex.from_documents([Document(text=t) for t in DOCS], embed_model=HashEmbedding())
    nodes = index.as_retriever(similarity_top_k=2).retrieve("flights to Cairo")
    engine = index.as_query_engine(llm=ScriptedFunctionCallingLLM(default="Daily."), similarity_top_k=2)
    assert str(engine.query("flights to Cairo")) == "Daily."
    hub.wait_for(lambda: len(of(hub, "node.finished", "chain:RetrieverQueryEngine")) == 1)
    retrieved = of(hub, "node.finished", "retriever:VectorIndexRetriever")
    assert of(hub, "node.started", "retriever:VectorIndexRetriever")[0]["input"] == {
        "query": "flights to Cairo"
    }
    out = retrieved[0]["output"]
    assert [n["text"] for n in out] == [n.node.get_content() for n in nodes]
    assert [n["score"] for n in out] == pytest.approx([n.score for n in nodes]) and out[0]["score"] > out[1][
        "score"
    ]
    query = of(hub, "node.finished", "chain:RetrieverQueryEngine")[0]
    assert query["output"]["response"] == "Daily." and len(query["output"]["sources"]) == 2
    engine_node = of(hub, "node.started", "chain:RetrieverQueryEngine")[0]
    assert (
        of(hub, "node.started", "retriever:VectorIndexRetriever")[1]["parentInstanceId"]
        == engine_node["instanceId"]
    )
    assert of(hub, "node.started", "llm:step")[0]["parentInstanceId"] == engine_node["instanceId"]


def test_an_llm_error_fails_its_node(hub: FakeHub, client: graphmind.Client) -> None:
    instrument_llamaindex(client)
    llm = ScriptedFunctionCallingLLM([RuntimeError("provider down")])
    with pytest.raises(RuntimeError, match="provider down"):
        llm.chat([ChatMessage(role="user", content="hi")])
    failed = hub.wait_event(lambda e: e["type"] == "node.error")
    assert failed["nodeId"] == "llm:step" and failed["error"]["message"] == "provider down"


def test_a_handler_failure_warns_and_the_call_goes_on(
    hub: FakeHub, client: graphmind.Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from graphmind_llamaindex import _handler

    instrument_llamaindex(client)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("boom")

    monkeypatch.setattr(_handler, "llm_node", broken)
    llm = ScriptedFunctionCallingLLM(["fine"])
    assert llm.chat([ChatMessage(role="user", content="hi")]).message.content == "fine"
    assert "the LlamaIndex handler failed in span_enter" in caplog.text


def test_an_observed_stream_dropped_early_ends_its_node_cut_short(
    hub: FakeHub, client: graphmind.Client
) -> None:
    import gc

    instrument_llamaindex(client)
    llm = ScriptedFunctionCallingLLM(["one two three four five"], chunk_size=4)
    stream = llm.stream_chat([ChatMessage(role="user", content="hi")])
    first = next(stream)
    assert first.delta == "one "
    stream.close()
    del stream
    gc.collect()
    finished = hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "llm:step")
    assert finished["cutShort"] is True and finished["output"] == {"content": "one "}


def test_an_observed_stream_never_read_ends_cut_short_when_dropped(
    hub: FakeHub, client: graphmind.Client
) -> None:
    import gc

    instrument_llamaindex(client)
    llm = ScriptedFunctionCallingLLM(["never read"])
    stream = llm.stream_chat([ChatMessage(role="user", content="hi")])
    del stream
    gc.collect()
    finished = hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "llm:step")
    assert finished["cutShort"] is True
