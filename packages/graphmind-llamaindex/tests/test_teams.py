"""An `AgentWorkflow` of two `FunctionAgent`s that hand off with LlamaIndex's own `handoff` tool:
every node says its agent, each agent's model steps are their own logical node, and the handoff
is a node of its own (`handoff:<from>-><to>`, observed: LlamaIndex's dispatcher cannot hold)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from li_fixtures import of
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.tools import FunctionTool

import graphmind
from graphmind import protocol as proto
from graphmind.testing import FakeHub
from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case
from graphmind_llamaindex import gate_llm, instrument_llamaindex, ungate_llm, uninstrument_llamaindex
from graphmind_llamaindex.testing import ScriptedFunctionCallingLLM, tool_call


def lookup(invoice: str) -> str:
    """Look up an invoice."""
    return f"invoice {invoice}: paid"


def team() -> tuple[AgentWorkflow, ScriptedFunctionCallingLLM, ScriptedFunctionCallingLLM]:
    triage_llm = ScriptedFunctionCallingLLM(
        [{"content": "", "tool_calls": [tool_call("handoff", "h1", to_agent="billing", reason="an invoice")]}]
    )
    billing_llm = ScriptedFunctionCallingLLM(
        [{"content": "", "tool_calls": [tool_call("lookup", "c1", invoice="42")]}, "invoice 42 is paid"]
    )
    triage = FunctionAgent(
        name="triage", description="routes questions", llm=triage_llm, tools=[], can_handoff_to=["billing"]
    )
    billing = FunctionAgent(
        name="billing",
        description="answers invoices",
        llm=billing_llm,
        tools=[FunctionTool.from_defaults(lookup)],
    )
    return AgentWorkflow(agents=[triage, billing], root_agent="triage"), triage_llm, billing_llm


def test_an_agent_workflow_reports_its_agents_and_the_handoff(hub: FakeHub, client: graphmind.Client) -> None:
    instrument_llamaindex(session=client)
    workflow, _, billing_llm = team()

    async def main() -> Any:
        return await workflow.run(user_msg="what about invoice 42?")

    result = asyncio.run(main())
    assert "invoice 42 is paid" in str(result)
    hub.wait_for(lambda: bool(of(hub, proto.RUN_FINISHED)), what="the run's end")
    nodes = of(hub, proto.NODE_STARTED)
    (triage_step,) = [e for e in nodes if e["nodeId"] == "llm:step"]
    assert triage_step["agent"] == "triage" and triage_step["agentPath"] == ["triage"]
    billing_steps = [e for e in nodes if e["nodeId"] == "llm:step@billing"]
    assert len(billing_steps) == 2 == len(billing_llm.calls)
    assert all(e["agentPath"] == ["triage", "billing"] for e in billing_steps)
    (handoff,) = [e for e in nodes if e["nodeId"] == "handoff:triage->billing"]
    assert handoff["kind"] == "handoff"
    assert handoff["input"]["to"] == "billing" and handoff["input"]["reason"] == "an invoice"
    (tool,) = [e for e in nodes if e["nodeId"] == "tool:lookup"]
    assert tool["agent"] == "billing"
    ended = [
        e
        for e in hub.events
        if e.get("nodeId") == "handoff:triage->billing" and e["type"] != proto.NODE_STARTED
    ]
    assert [e["type"] for e in ended] == [proto.NODE_FINISHED]


def test_a_single_function_agent_keeps_llm_step(hub: FakeHub, client: graphmind.Client) -> None:
    instrument_llamaindex(session=client)
    llm = ScriptedFunctionCallingLLM(["hello there"])
    agent = FunctionAgent(name="solo", description="alone", llm=llm, tools=[])

    async def main() -> Any:
        return await agent.run(user_msg="hi")

    asyncio.run(main())
    hub.wait_for(lambda: bool(of(hub, proto.RUN_FINISHED)), what="the run's end")
    steps = [e for e in of(hub, proto.NODE_STARTED) if e["kind"] == "llm"]
    assert [e["nodeId"] for e in steps] == ["llm:step"]
    assert not [e for e in of(hub, proto.NODE_STARTED) if e["nodeId"].startswith("handoff:")]


class WorkflowTeam(TeamSubject):
    """The kit's two-agent cases: `triage` hands off to `billing` inside one AgentWorkflow, both
    LLMs gated (`gate_llm`: the dispatcher's handler alone cannot hold). The handoff is observed,
    so the kit's handoff cases (edit, inject) do not apply (`handoff = False`)."""

    root, other = "triage", "billing"
    handoff = False

    def __init__(self) -> None:
        self.billing: ScriptedFunctionCallingLLM | None = None
        self.llms: list[ScriptedFunctionCallingLLM] = []

    def make(self) -> AgentWorkflow:
        workflow, triage, self.billing = team()
        self.llms = [triage, self.billing]
        return workflow

    def instrument(self, thing: AgentWorkflow, session: graphmind.Client) -> AgentWorkflow:
        instrument_llamaindex(session=session)
        for llm in self.llms:
            gate_llm(llm, session=session)
        return thing

    def undo(self, thing: AgentWorkflow) -> None:
        for llm in self.llms:
            ungate_llm(llm)
        uninstrument_llamaindex()

    async def acall_team(self, thing: AgentWorkflow) -> Any:
        return await thing.run(user_msg="what about invoice 42?")

    @property
    def other_model_calls(self) -> int:
        return len(self.billing.calls) if self.billing is not None else 0


@pytest.mark.parametrize("case", TEAM_CASES)
async def test_team(case: str, kit_hub: Any) -> None:
    await run_team_case(case, WorkflowTeam(), hub=kit_hub)
