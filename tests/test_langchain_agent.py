"""Acceptance: a LangGraph agent steered from the real hub (graphmind-server as a subprocess).

The agent is langgraph's prebuilt `create_react_agent` over langchain-core's
FakeMessagesListChatModel (given `bind_tools`, which none of the fakes has) and real `@tool`
tools, with GraphmindCallbackHandler in the config and the tools and model gated. `hub` is the
real hub fixture from tests/conftest.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

import graphmind
from graphmind import RunAborted
from graphmind_langchain import GraphmindCallbackHandler, gate_model, gate_tools
from graphmind_server.testing import HubProcess, wait_for

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent


class ToolCallingFakeModel(FakeMessagesListChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[{"type": "function", "function": {"name": t.name}} for t in tools], **kwargs)


@pytest.fixture
def client(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="lc-agent", url=hub.ingest_url)
    assert c.ready(5)
    yield c
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


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def main() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    return thread, box


def steer(
    hub: HubProcess,
    thread: threading.Thread,
    decide: Callable[[dict[str, Any]], tuple[str, Any]],
    timeout: float = 20.0,
) -> list[dict[str, Any]]:
    """Answers every gate the agent reaches until its thread ends; returns the gates seen."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while thread.is_alive():
        assert time.monotonic() < deadline, f"the agent did not finish; gates so far: {seen}"
        for gate in hub.api("GET", "/api/gates")[1]["gates"]:
            if all(g["gateId"] != gate["gateId"] for g in seen):
                seen.append(gate)
                answer(hub, gate, *decide(gate))
        thread.join(0.02)
    return seen


def make_agent(client: graphmind.Client, replies: list[AIMessage], tools: list[Any]) -> Any:
    model = gate_model(ToolCallingFakeModel(responses=replies), session=client)
    with warnings.catch_warnings():  # deprecated in favour of langchain.agents.create_agent (not installed)
        warnings.simplefilter("ignore")
        return create_react_agent(model, gate_tools(tools, session=client))


def call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def test_before_breakpoint_inject_on_a_tool_the_agent_continues_and_the_body_never_ran(
    hub: HubProcess, client: graphmind.Client
) -> None:
    ran: list[str] = []

    @tool
    def search(query: str) -> str:
        """Search the web."""
        ran.append(query)
        return "real results"

    agent = make_agent(client, [call("search", "c1", query="flights"), AIMessage("booked")], [search])
    debug(hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    config: Any = {"callbacks": [GraphmindCallbackHandler(client)]}
    thread, box = in_thread(lambda: agent.invoke({"messages": [HumanMessage("find flights")]}, config=config))
    gate = held(hub)[0]
    assert (gate["nodeId"], gate["gate"], gate["input"]) == ("tool:search", "before", {"query": "flights"})
    assert "inject" in gate["actions"]
    answer(hub, gate, "inject", "injected: 3 flights")
    thread.join(10)
    messages = box["result"]["messages"]
    assert ran == []
    tool_message = next(m for m in messages if isinstance(m, ToolMessage))
    assert tool_message.content == "injected: 3 flights" and tool_message.tool_call_id == "c1"
    assert messages[-1].content == "booked"
    # The app has finished; its last events may still be on their way to the hub (load): wait for them.
    run = wait_for(
        lambda: (r := hub.api("GET", f"/api/runs/{gate['runId']}")[1])["status"] == "finished" and r,
        10,
        "run.finished stored",
    )
    assert {n["nodeId"]: n["status"] for n in run["nodes"]}["tool:search"] == "injected"


def test_an_injected_model_reply_with_a_tool_call_makes_the_agent_call_that_tool(
    hub: HubProcess, client: graphmind.Client
) -> None:
    looked_up: list[str] = []

    @tool
    def search(query: str) -> str:
        """Search the web."""
        return "unused"

    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        looked_up.append(order_id)
        return f"order {order_id}: shipped"

    # The model on its own would answer at once; the person steers it to `lookup` instead.
    agent = make_agent(client, [AIMessage("I cannot tell"), AIMessage("it shipped")], [search, lookup])
    debug(hub, breakpoints=[{"nodeId": "llm:step", "gate": "before"}])
    steering = {
        "content": "",
        "tool_calls": [{"name": "lookup", "args": {"order_id": "A42"}, "id": "call_steer"}],
    }
    decisions = iter([("inject", steering)])
    thread, box = in_thread(
        lambda: agent.invoke(
            {"messages": [HumanMessage("where is A42?")]},
            config={"callbacks": [GraphmindCallbackHandler(client)]},
        )
    )
    seen = steer(hub, thread, lambda gate: next(decisions, ("continue", None)))
    assert looked_up == ["A42"]
    messages = box["result"]["messages"]
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai"]
    assert messages[2].content == "order A42: shipped" and messages[-1].content == "I cannot tell"
    assert [g["nodeId"] for g in seen] == ["llm:step", "llm:step"]


def test_error_gate_retry_reruns_a_failing_tool(hub: HubProcess, client: graphmind.Client) -> None:
    attempts: list[str] = []

    @tool
    def search(query: str) -> str:
        """Search the web."""
        attempts.append(query)
        if len(attempts) == 1:
            raise ConnectionError("search backend timed out")
        return "found it"

    agent = make_agent(client, [call("search", "c1", query="x"), AIMessage("done")], [search])
    debug(hub, pauseOnError="on", breakpoints=[])
    thread, box = in_thread(
        lambda: agent.invoke(
            {"messages": [HumanMessage("go")]}, config={"callbacks": [GraphmindCallbackHandler(client)]}
        )
    )
    gate = held(hub)[0]
    assert gate["gate"] == "error" and gate["error"]["message"] == "search backend timed out"
    answer(hub, gate, "retry")
    thread.join(10)
    assert attempts == ["x", "x"]
    assert next(m for m in box["result"]["messages"] if isinstance(m, ToolMessage)).content == "found it"


def test_abort_at_a_gate_stops_the_sync_agent_with_run_aborted(
    hub: HubProcess, client: graphmind.Client
) -> None:
    ran: list[str] = []

    @tool
    def search(query: str) -> str:
        """Search the web."""
        ran.append(query)
        return "r"

    agent = make_agent(client, [call("search", "c1", query="x"), AIMessage("done")], [search])
    debug(hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    thread, box = in_thread(
        lambda: agent.invoke(
            {"messages": [HumanMessage("go")]}, config={"callbacks": [GraphmindCallbackHandler(client)]}
        )
    )
    gate = held(hub)[0]
    answer(hub, gate, "abort")
    thread.join(10)
    assert isinstance(box.get("error"), RunAborted) and ran == []
    status = wait_for(
        lambda: hub.api("GET", f"/api/runs/{gate['runId']}")[1]["status"] == "aborted", 5, "aborted"
    )
    assert status


async def test_aborting_the_run_stops_the_async_agent_with_run_aborted(
    hub: HubProcess, client: graphmind.Client
) -> None:
    ran: list[str] = []

    @tool
    async def search(query: str) -> str:
        """Search the web."""
        ran.append(query)
        return "r"

    agent = make_agent(client, [call("search", "c1", query="x"), AIMessage("done")], [search])
    await asyncio.to_thread(debug, hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    task = asyncio.create_task(
        agent.ainvoke(
            {"messages": [HumanMessage("go")]}, config={"callbacks": [GraphmindCallbackHandler(client)]}
        )
    )
    gate = (await asyncio.to_thread(held, hub))[0]
    status, _ = await asyncio.to_thread(hub.api, "POST", f"/api/runs/{gate['runId']}/abort", {})
    assert status == 200
    with pytest.raises(RunAborted):
        await asyncio.wait_for(task, 10)
    assert ran == []


async def test_twenty_async_tool_calls_held_at_once_do_not_block_the_event_loop(
    hub: HubProcess, client: graphmind.Client
) -> None:
    ran: list[str] = []

    @tool
    async def search(query: str) -> str:
        """Search the web."""
        ran.append(query)
        return f"r{query}"

    many = AIMessage(
        content="",
        tool_calls=[{"name": "search", "args": {"query": str(i)}, "id": f"c{i}"} for i in range(20)],
    )
    agent = make_agent(client, [many, AIMessage("all done")], [search])
    await asyncio.to_thread(debug, hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    tick_task = asyncio.create_task(ticker())
    task = asyncio.create_task(
        agent.ainvoke(
            {"messages": [HumanMessage("go")]}, config={"callbacks": [GraphmindCallbackHandler(client)]}
        )
    )
    gates = await asyncio.to_thread(held, hub, 20)
    before = ticks
    await asyncio.sleep(0.2)
    assert ticks - before >= 10, "the event loop stalled while 20 gates were held"
    assert ran == [] and len({g["instanceId"] for g in gates}) == 20
    for gate in gates:
        await asyncio.to_thread(answer, hub, gate, "continue")
    result = await asyncio.wait_for(task, 10)
    tick_task.cancel()
    assert sorted(ran, key=int) == [str(i) for i in range(20)]
    assert result["messages"][-1].content == "all done"
