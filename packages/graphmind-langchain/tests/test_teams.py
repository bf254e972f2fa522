"""A LangGraph supervisor over two worker agents on the real hub process: the supervisor routes with
`Command(goto=...)`, each worker is a `create_agent` subgraph with its own chat model and tool. Every
node says its agent, each worker's model steps are their own logical node, and a breakpoint on one
worker's model step holds that worker only."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from typing import Any, Literal

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

import graphmind
from graphmind import protocol as proto
from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case
from graphmind_langchain import GraphmindCallbackHandler
from graphmind_server.testing import HubProcess, KitHub

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langchain.agents import create_agent
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import Command


@pytest.fixture
def live(hub_process: HubProcess) -> Iterator[tuple[KitHub, graphmind.Client]]:
    with KitHub(hub_process) as kit:
        client = graphmind.Client(app="lc-teams", url=kit.url, retry_interval=0.2)
        try:
            assert client.ready(5)
            yield kit, client
        finally:
            client.dispose()


class ToolCallingFakeModel(FakeMessagesListChatModel):
    """FakeMessagesListChatModel with bind_tools, which `create_agent` calls."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[{"type": "function", "function": {"name": t.name}} for t in tools], **kwargs)


class Team:
    """The supervisor sends the question to billing, then to support, then ends."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.handler: GraphmindCallbackHandler | None = None
        self.models: dict[str, Any] = {}
        calls = self.calls

        @tool
        def lookup_invoice(number: str) -> str:
            """Look up an invoice."""
            calls.append("lookup_invoice")
            return f"invoice {number}: paid"

        @tool
        def reset_password(user: str) -> str:
            """Reset a user's password."""
            calls.append("reset_password")
            return f"password of {user} reset"

        def worker(name: str, tool_name: str, args: dict[str, Any], answer: str) -> Any:
            model = ToolCallingFakeModel(
                responses=[
                    AIMessage("", tool_calls=[{"name": tool_name, "args": args, "id": f"{name}-1"}]),
                    AIMessage(answer),
                ]
            )
            tools = [lookup_invoice] if tool_name == "lookup_invoice" else [reset_password]
            self.models[name] = model
            return create_agent(model, tools, name=name)

        self.supervisor_model = ToolCallingFakeModel(
            responses=[AIMessage("billing"), AIMessage("support"), AIMessage("FINISH")]
        )

        def supervisor(state: MessagesState) -> Command[Literal["billing", "support", "__end__"]]:
            reply = self.supervisor_model.invoke(state["messages"])
            return Command(goto=END if reply.content == "FINISH" else str(reply.content))

        graph = StateGraph(MessagesState)
        graph.add_node("supervisor", supervisor)
        graph.add_node("billing", worker("billing", "lookup_invoice", {"number": "42"}, "invoice paid"))
        graph.add_node("support", worker("support", "reset_password", {"user": "ann"}, "password reset"))
        graph.add_edge(START, "supervisor")
        graph.add_edge("billing", "supervisor")
        graph.add_edge("support", "supervisor")
        self.app = graph.compile(name="helpdesk")

    @property
    def billing_calls(self) -> int:
        return int(self.models["billing"].i)  # FakeMessagesListChatModel's index of the next reply

    def run(self, client: graphmind.Client) -> Any:
        config = {"callbacks": [GraphmindCallbackHandler(session=client)]}
        return self.app.invoke({"messages": [HumanMessage("my invoice and my password")]}, config)


def test_the_workers_are_told_apart(live: tuple[KitHub, graphmind.Client]) -> None:
    kit, client = live
    out = Team().run(client)
    assert out["messages"][-1].content == "password reset"
    kit.wait_for(lambda: bool(kit.of_type(proto.RUN_FINISHED)), what="the run's end")
    nodes = kit.of_type(proto.NODE_STARTED)
    steps: dict[str, set[tuple[str, ...]]] = {}
    for e in nodes:
        if e["kind"] == "llm":
            steps.setdefault(e["nodeId"], set()).add(tuple(e["agentPath"]))
    assert steps == {
        "llm:step": {("helpdesk",)},
        "llm:step@billing": {("helpdesk", "billing")},
        "llm:step@support": {("helpdesk", "support")},
    }
    tools = {e["nodeId"]: e["agent"] for e in nodes if e["kind"] == "tool"}
    assert tools == {"tool:lookup_invoice": "billing", "tool:reset_password": "support"}
    handoffs = [e["nodeId"] for e in nodes if e["kind"] == "handoff"]
    assert handoffs == ["handoff:helpdesk->billing", "handoff:helpdesk->support"]


def test_a_breakpoint_on_one_workers_step_holds_only_that_worker(
    live: tuple[KitHub, graphmind.Client],
) -> None:
    kit, client = live
    held: list[dict[str, Any]] = []

    def answer(frame: dict[str, Any]) -> tuple[str, Any]:
        held.append(frame)
        return proto.CONTINUE, None

    kit.auto_answer(answer)
    kit.set_debug(breakpoints=[("llm:step@billing", proto.BEFORE)])
    team = Team()
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.update(out=team.run(client)), daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive() and box["out"]["messages"][-1].content == "password reset"
    kit.wait_for(lambda: bool(kit.of_type(proto.RUN_FINISHED)), what="the run's end")
    assert [frame["nodeId"] for frame in held] == ["llm:step@billing", "llm:step@billing"]
    assert {frame["input"]["messages"][0]["content"] for frame in held} == {"my invoice and my password"}


def test_a_single_agent_graph_keeps_llm_step(live: tuple[KitHub, graphmind.Client]) -> None:
    kit, client = live
    model = ToolCallingFakeModel(responses=[AIMessage("hi")])
    create_agent(model, [], name="solo").invoke(
        {"messages": [HumanMessage("hello")]}, {"callbacks": [GraphmindCallbackHandler(session=client)]}
    )
    kit.wait_for(lambda: bool(kit.of_type(proto.RUN_FINISHED)), what="the run's end")
    assert [e["nodeId"] for e in kit.of_type(proto.NODE_STARTED) if e["kind"] == "llm"] == ["llm:step"]


class SupervisorTeam(TeamSubject):
    """The kit's two-agent cases: the graph's root (`helpdesk`, whose supervisor node makes the
    root's model step) routes to the `billing` worker agent. The routing is observed, so the kit's
    handoff cases (edit, inject) do not apply (`handoff = False`)."""

    root, other = "helpdesk", "billing"
    handoff = False

    def __init__(self) -> None:
        self.team = Team()

    def make(self) -> Team:
        self.team = Team()
        return self.team

    def instrument(self, thing: Team, session: graphmind.Client) -> Team:
        thing.handler = GraphmindCallbackHandler(session=session)
        return thing

    def undo(self, thing: Team) -> None:
        thing.handler = None

    async def acall_team(self, thing: Team) -> Any:
        config = {"callbacks": [thing.handler]} if thing.handler is not None else {}
        return await thing.app.ainvoke({"messages": [HumanMessage("my invoice and my password")]}, config)

    @property
    def other_model_calls(self) -> int:
        return self.team.billing_calls


@pytest.mark.parametrize("case", TEAM_CASES)
async def test_team(case: str, kit_hub: Any) -> None:
    await run_team_case(case, SupervisorTeam(), hub=kit_hub)
