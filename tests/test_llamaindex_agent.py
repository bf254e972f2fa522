"""Acceptance: a LlamaIndex FunctionAgent steered from the real hub (graphmind-server as a subprocess).

The agent is llama-index-core's own FunctionAgent over a scripted `FunctionCallingLLM`
(graphmind_llamaindex.testing) and real `FunctionTool`s, with the root-dispatcher handler
installed and the tools and LLM gated. `hub` is the real hub fixture from tests/conftest.py.
No network: the LLM answers from its script, the retriever embeds with a local hash.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool

import graphmind
from graphmind import RunAborted
from graphmind_llamaindex import gate_llm, gate_tools, instrument_llamaindex, uninstrument_llamaindex
from graphmind_llamaindex.testing import HashEmbedding, ScriptedFunctionCallingLLM, tool_call
from graphmind_server.testing import HubProcess, wait_for


@pytest.fixture
def client(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="li-agent", url=hub.ingest_url)
    assert c.ready(5)
    instrument_llamaindex(c)
    yield c
    uninstrument_llamaindex()
    c.dispose()


def debug(hub: HubProcess, **state: Any) -> None:
    status, body = hub.api("PUT", "/api/debug", state)
    assert status == 200 and not body.get("pending"), body


def held(hub: HubProcess, count: int = 1, timeout: float = 10.0) -> list[dict[str, Any]]:
    def gates() -> list[dict[str, Any]] | None:
        found = hub.api("GET", "/api/gates")[1]["gates"]
        return found if len(found) >= count else None

    return wait_for(gates, timeout, f"{count} held gate(s)")  # type: ignore[no-any-return]


def answer(hub: HubProcess, gate: dict[str, Any], action: str, value: Any = None) -> None:
    body = {"action": action} if value is None else {"action": action, "value": value}
    status, reply = hub.api("POST", f"/api/gates/{gate['gateId']}", body)
    assert status == 200, reply


async def next_gate(hub: HubProcess, count: int = 1) -> list[dict[str, Any]]:
    return await asyncio.to_thread(held, hub, count)


async def reply(hub: HubProcess, gate: dict[str, Any], action: str, value: Any = None) -> None:
    await asyncio.to_thread(answer, hub, gate, action, value)


def make_agent(
    client: graphmind.Client, replies: list[Any], tools: list[FunctionTool], **kwargs: Any
) -> FunctionAgent:
    llm = gate_llm(ScriptedFunctionCallingLLM(replies), session=client)
    return FunctionAgent(tools=gate_tools(tools, session=client), llm=llm, **kwargs)


def searcher(ran: list[str], fail_first: bool = False) -> FunctionTool:
    async def search(query: str) -> str:
        """Search the web."""
        ran.append(query)
        if fail_first and len(ran) == 1:
            raise ConnectionError("search backend timed out")
        return f"results for {query}"

    return FunctionTool.from_defaults(async_fn=search)


def run_nodes(hub: HubProcess, run_id: str, status: str) -> dict[str, Any]:
    wait_for(lambda: hub.api("GET", f"/api/runs/{run_id}")[1].get("status") == status, 10, f"run {status}")
    return hub.api("GET", f"/api/runs/{run_id}")[1]  # type: ignore[no-any-return]


async def test_before_inject_on_a_tool_the_agent_continues_and_the_body_never_ran(
    hub: HubProcess, client: graphmind.Client
) -> None:
    ran: list[str] = []
    agent = make_agent(
        client,
        [{"content": "", "tool_calls": [tool_call("search", "c1", query="flights")]}, "booked"],
        [searcher(ran)],
    )
    await asyncio.to_thread(debug, hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    task = agent.run("find flights")  # a WorkflowHandler: already running
    gate = (await next_gate(hub))[0]
    assert (gate["nodeId"], gate["gate"], gate["input"], gate["instanceId"]) == (
        "tool:search",
        "before",
        {"query": "flights"},
        "c1",
    )
    assert "inject" in gate["actions"]
    await reply(hub, gate, "inject", "injected: 3 flights")
    result = await asyncio.wait_for(task, 10)
    assert ran == [] and str(result) == "booked"
    assert result.tool_calls[0].tool_output.content == "injected: 3 flights"
    run = await asyncio.to_thread(run_nodes, hub, gate["runId"], "finished")
    assert {n["nodeId"]: n["status"] for n in run["nodes"]}["tool:search"] == "injected"


async def test_an_injected_llm_reply_with_a_tool_call_makes_the_agent_call_that_tool(
    hub: HubProcess, client: graphmind.Client
) -> None:
    looked_up: list[str] = []

    def lookup(order_id: str) -> str:
        """Look an order up."""
        looked_up.append(order_id)
        return f"order {order_id}: shipped"

    # The LLM on its own would answer at once; the person steers it to `lookup` instead.
    agent = make_agent(
        client, ["I cannot tell", "it shipped"], [searcher([]), FunctionTool.from_defaults(lookup)]
    )
    await asyncio.to_thread(debug, hub, breakpoints=[{"nodeId": "llm:step", "gate": "before"}])
    task = agent.run("where is A42?")  # a WorkflowHandler: already running
    first = (await next_gate(hub))[0]
    steering = {
        "content": "",
        "tool_calls": [{"id": "call_steer", "name": "lookup", "arguments": {"order_id": "A42"}}],
    }
    await reply(hub, first, "inject", steering)
    second = await asyncio.to_thread(
        wait_for,
        lambda: [g for g in hub.api("GET", "/api/gates")[1]["gates"] if g["gateId"] != first["gateId"]],
        10,
        "the second step",
    )
    await reply(hub, second[0], "continue")
    result = await asyncio.wait_for(task, 10)
    assert looked_up == ["A42"] and str(result) == "I cannot tell"
    await asyncio.to_thread(run_nodes, hub, first["runId"], "finished")
    events = (await asyncio.to_thread(hub.api, "GET", f"/api/runs/{first['runId']}/events"))[1]["events"]
    started = [
        e["instanceId"] for e in events if e["type"] == "node.started" and e["nodeId"] == "tool:lookup"
    ]
    assert started == ["call_steer"]  # the tool node takes the injected call's id


async def test_error_gate_retry_reruns_a_failing_tool(hub: HubProcess, client: graphmind.Client) -> None:
    ran: list[str] = []
    agent = make_agent(
        client,
        [{"content": "", "tool_calls": [tool_call("search", "c1", query="x")]}, "done"],
        [searcher(ran, fail_first=True)],
    )
    await asyncio.to_thread(debug, hub, pauseOnError="on", breakpoints=[])
    task = agent.run("go")  # a WorkflowHandler: already running
    gate = (await next_gate(hub))[0]
    assert gate["gate"] == "error" and gate["error"]["message"] == "search backend timed out"
    await reply(hub, gate, "retry")
    result = await asyncio.wait_for(task, 10)
    assert ran == ["x", "x"] and result.tool_calls[0].tool_output.content == "results for x"


async def test_abort_at_a_tool_stops_the_agent_with_run_aborted(
    hub: HubProcess, client: graphmind.Client
) -> None:
    ran: list[str] = []
    llm_replies = [{"content": "", "tool_calls": [tool_call("search", "c1", query="x")]}, "never reached"]
    agent = make_agent(client, llm_replies, [searcher(ran)])
    await asyncio.to_thread(debug, hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    task = agent.run("go")  # a WorkflowHandler: already running
    gate = (await next_gate(hub))[0]
    await reply(hub, gate, "abort")
    # FunctionAgent turns a tool's exception into an error result (base_agent.py, _call_tool:
    # `except Exception`); the agent's next gated LLM step raises RunAborted at once.
    with pytest.raises(RunAborted):
        await asyncio.wait_for(task, 10)
    assert ran == [] and len(agent.llm.calls) == 1  # type: ignore[attr-defined]
    await asyncio.to_thread(run_nodes, hub, gate["runId"], "aborted")


async def test_twenty_agents_held_at_once_do_not_block_the_event_loop(
    hub: HubProcess, client: graphmind.Client
) -> None:
    ran: list[str] = []
    tools = [searcher(ran)]
    agents = [
        make_agent(
            client,
            [{"content": "", "tool_calls": [tool_call("search", f"c{i}", query=str(i))]}, f"done {i}"],
            tools,
        )
        for i in range(20)
    ]
    await asyncio.to_thread(debug, hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    tick_task = asyncio.create_task(ticker())
    tasks = [agent.run("go") for agent in agents]
    gates = await next_gate(hub, 20)
    before = ticks
    await asyncio.sleep(0.2)
    assert ticks - before >= 10, "the event loop stalled while 20 gates were held"
    assert ran == [] and sorted(g["instanceId"] for g in gates) == sorted(f"c{i}" for i in range(20))
    for gate in gates:
        await reply(hub, gate, "continue")
    results = await asyncio.wait_for(asyncio.gather(*tasks), 20)
    tick_task.cancel()
    assert sorted(ran, key=int) == [str(i) for i in range(20)]
    assert sorted(str(r) for r in results) == sorted(f"done {i}" for i in range(20))


def test_a_retrievers_nodes_appear_with_their_scores(hub: HubProcess, client: graphmind.Client) -> None:
    docs = ["Cairo is the capital of Egypt.", "Paris has the Eiffel tower.", "Flights to Cairo leave daily."]
    index = VectorStoreIndex.from_documents([Document(text=t) for t in docs], embed_model=HashEmbedding())
    with client.run("retrieve") as run:
        nodes = index.as_retriever(similarity_top_k=2).retrieve("flights to Cairo")
    events = wait_for(
        lambda: [
            e
            for e in hub.api("GET", f"/api/runs/{run.run_id}/events")[1].get(
                "events", []
            )  # 404 until it arrives
            if e["type"] == "node.finished"
        ],
        10,
        "the retriever node",
    )
    finished = events[0]
    assert finished["nodeId"] == "retriever:VectorIndexRetriever"
    assert [(n["text"], n["score"]) for n in finished["output"]] == [
        (n.node.get_content(), pytest.approx(n.score)) for n in nodes
    ]
    assert (
        finished["output"][0]["text"] == "Flights to Cairo leave daily."
        and finished["output"][0]["score"] > 0.5
    )
