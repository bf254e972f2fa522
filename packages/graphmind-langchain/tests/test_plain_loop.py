"""The README's plain agent loop (no LangGraph), steered through FakeHub."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool

import graphmind
from graphmind import RunAborted
from graphmind.testing import FakeHub
from graphmind_langchain import GraphmindCallbackHandler, gate_model, gate_tools


def run_loop(client: graphmind.Client, model: Any, tools: list[Any]) -> list[BaseMessage]:
    tools = gate_tools(tools, session=client)
    by_name = {t.name: t for t in tools}
    bound = gate_model(model, session=client).bind_tools(tools)
    config: Any = {"callbacks": [GraphmindCallbackHandler(client)]}
    with client.run("support-agent"):
        messages: list[BaseMessage] = [HumanMessage("Where is order A42?")]
        while True:
            reply = bound.invoke(messages, config=config)
            messages.append(reply)
            if not reply.tool_calls:
                return messages
            for call in reply.tool_calls:
                messages.append(by_name[call["name"]].invoke(call, config=config))


def make_lookup(ran: list[str]) -> Any:
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        ran.append(order_id)
        return f"{order_id}: in transit"

    return lookup


def test_the_plain_loop_is_one_run_and_a_tool_result_can_be_injected(
    hub: FakeHub, client: graphmind.Client, fake_model: Any
) -> None:
    ran: list[str] = []
    call = AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"order_id": "A42"}, "id": "c1"}])
    model = fake_model(responses=[call, AIMessage("It was delivered.")])
    hub.set_debug(breakpoints=[("tool:lookup", "before")])
    hub.auto_answer("inject", "A42: delivered yesterday")
    messages = run_loop(client, model, [make_lookup(ran)])
    assert ran == [] and messages[2].content == "A42: delivered yesterday"
    hub.wait_event(lambda e: e["type"] == "run.finished")
    runs = {e["runId"] for e in hub.events if "runId" in e}
    assert len(runs) == 1
    assert [e["nodeId"] for e in hub.of_type("node.started")] == ["llm:step", "tool:lookup", "llm:step"]


def test_an_abort_ends_the_plain_loop_with_run_aborted(
    hub: FakeHub, client: graphmind.Client, fake_model: Any
) -> None:
    ran: list[str] = []
    call = AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"order_id": "A42"}, "id": "c1"}])
    hub.set_debug(breakpoints=[("tool:lookup", "before")])
    hub.auto_answer("abort")
    with pytest.raises(RunAborted):
        run_loop(client, fake_model(responses=[call, AIMessage("never")]), [make_lookup(ran)])
    assert ran == []
    finished = hub.wait_event(lambda e: e["type"] == "run.finished")
    assert finished["status"] == "aborted"
