"""A team of ADK agents on the real hub process: a root agent (`triage`) with two sub-agents
(`billing`, `support`) that transfers to `billing` with ADK's own `transfer_to_agent`; the scripted
models decide which agent answers. Each agent's model steps are its own logical node, the transfer
is a handoff node whose before gate can edit what is handed over or answer as the target."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from adk_helpers import (
    Counter,
    ScriptedLlm,
    agent,
    call_response,
    collect,
    final_text,
    last_tool_result,
    reply_script,
    runner,
    text_response,
)
from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools.agent_tool import AgentTool

import graphmind
from graphmind import protocol as proto
from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case
from graphmind_google_adk import instrument_runner, uninstrument_runner
from graphmind_server.testing import HubProcess, KitHub

HANDOFF = "handoff:triage->billing"


@pytest.fixture
def hub(hub_process: HubProcess) -> Iterator[tuple[KitHub, graphmind.Client]]:
    with KitHub(hub_process) as kit:
        client = graphmind.Client(app="adk-teams", url=kit.url, retry_interval=0.2)
        try:
            assert client.ready(5)
            yield kit, client
        finally:
            client.dispose()


def triage_script(request: LlmRequest) -> list[LlmResponse]:
    """Transfers to billing, with a reason (ADK's `transfer_to_agent` takes one)."""
    args = {"agent_name": "billing", "transfer_reason": "an invoice question"}
    return [call_response("transfer_to_agent", args, "transfer-1")]


class Team:
    def __init__(self, billing_tool: bool = False) -> None:
        self.tools = Counter()
        self.triage = ScriptedLlm(script=triage_script)
        self.billing = ScriptedLlm(
            script=self._billing_script if billing_tool else reply_script("paid in full")
        )
        self.support = ScriptedLlm(script=reply_script("support here"))
        billing_tools = [self.tools.add] if billing_tool else []
        self.root = LlmAgent(
            name="triage",
            model=self.triage,
            instruction="Route the question.",
            sub_agents=[
                agent(self.billing, billing_tools, name="billing"),
                agent(self.support, name="support"),
            ],
        )

    @staticmethod
    def _billing_script(request: LlmRequest) -> list[LlmResponse]:
        result = last_tool_result(request)
        if result is None or "sum" not in result:
            return [call_response("add", {"a": 2, "b": 3}, "add-1")]
        return [text_response(f"total {result['sum']}")]


def texts(request: LlmRequest) -> str:
    return " ".join(p.text or "" for c in request.contents for p in c.parts or [])


def started(kit: KitHub) -> list[dict[str, Any]]:
    return kit.of_type(proto.NODE_STARTED)


def wait_run_end(kit: KitHub) -> dict[str, Any]:
    kit.wait_for(lambda: bool(kit.of_type(proto.RUN_FINISHED)), what="the run's end")
    return kit.of_type(proto.RUN_FINISHED)[0]


async def test_two_agents_their_own_model_steps_and_one_handoff_node(
    hub: tuple[KitHub, graphmind.Client],
) -> None:
    kit, client = hub
    team = Team(billing_tool=True)
    events = await collect(instrument_runner(runner(team.root), session=client))
    assert final_text(events) == "total 5"
    wait_run_end(kit)
    nodes = started(kit)
    by_id: dict[str, list[dict[str, Any]]] = {}
    for e in nodes:
        by_id.setdefault(e["nodeId"], []).append(e)
    assert {e["agent"] for e in nodes if "agent" in e} >= {"triage", "billing"}
    (triage_step,) = by_id["llm:step"]
    assert triage_step["agent"] == "triage" and triage_step["agentPath"] == ["triage"]
    billing_steps = by_id["llm:step@billing"]
    assert len(billing_steps) == 2  # the tool call, then the answer: one logical node
    assert all(e["agentPath"] == ["triage", "billing"] for e in billing_steps)
    (handoff,) = by_id[HANDOFF]
    assert handoff["kind"] == "handoff" and handoff["input"]["to"] == "billing"
    assert handoff["input"]["reason"] == "an invoice question"
    assert any(m.get("content") == "hello" for m in handoff["input"]["messages"])
    (tool,) = by_id["tool:add"]
    assert tool["agent"] == "billing"
    assert "support" not in {e.get("agent") for e in nodes} and team.support.calls == 0


async def test_a_breakpoint_on_the_sub_agents_step_holds_only_it(
    hub: tuple[KitHub, graphmind.Client],
) -> None:
    kit, client = hub
    team = Team()
    held: list[dict[str, Any]] = []

    def answer(frame: dict[str, Any]) -> tuple[str, Any]:
        held.append(frame)
        return proto.CONTINUE, None

    kit.auto_answer(answer)
    kit.set_debug(breakpoints=[("llm:step@billing", proto.BEFORE)])
    events = await collect(instrument_runner(runner(team.root), session=client))
    assert final_text(events) == "paid in full"
    wait_run_end(kit)
    assert [frame["nodeId"] for frame in held] == ["llm:step@billing"]
    assert team.triage.calls == 1 and team.billing.calls == 1


async def test_an_edit_at_the_handoff_reaches_the_sub_agents_first_model_request(
    hub: tuple[KitHub, graphmind.Client],
) -> None:
    kit, client = hub
    team = Team()
    seen: list[dict[str, Any]] = []

    def edit(frame: dict[str, Any]) -> Any:
        seen.append(frame)
        assert frame["nodeId"] == HANDOFF and frame.get("editable") is True, frame.get("notEditable")
        value = frame["input"]
        messages = [
            {**m, "content": "refund invoice 42 please"} if m.get("content") == "hello" else m
            for m in value["messages"]
        ]
        return proto.CONTINUE, None, {"input": {**value, "messages": messages}}

    kit.auto_answer(edit)
    kit.set_debug(breakpoints=[(HANDOFF, proto.BEFORE)])
    events = await collect(instrument_runner(runner(team.root), session=client))
    assert final_text(events) == "paid in full"
    assert len(seen) == 1
    first = team.billing.requests[0]
    assert "refund invoice 42 please" in texts(first)
    assert first.config.system_instruction and "Be brief." in str(first.config.system_instruction)
    wait_run_end(kit)
    (end,) = [e for e in kit.events if e.get("nodeId") == HANDOFF and e["type"] == proto.NODE_FINISHED]
    assert end.get("edited") is True


async def test_an_inject_at_the_handoff_answers_as_the_sub_agent_without_running_it(
    hub: tuple[KitHub, graphmind.Client],
) -> None:
    kit, client = hub
    team = Team()
    kit.auto_answer(
        lambda frame: (
            (proto.INJECT, "answered by hand") if frame["nodeId"] == HANDOFF else (proto.CONTINUE, None)
        )
    )
    kit.set_debug(breakpoints=[(HANDOFF, proto.BEFORE)])
    events = await collect(instrument_runner(runner(team.root), session=client))
    assert team.billing.calls == 0
    assert final_text(events) == "answered by hand"
    assert [e.author for e in events if e.content is not None][-1] == "billing"
    end = wait_run_end(kit)
    assert end.get("error") is None
    (finished,) = [e for e in kit.events if e.get("nodeId") == HANDOFF and e["type"] == proto.NODE_FINISHED]
    assert finished["output"] is not None


async def test_an_agent_tool_runs_in_the_callers_run_as_its_own_agent(
    hub: tuple[KitHub, graphmind.Client],
) -> None:
    kit, client = hub
    helper_model = ScriptedLlm(script=reply_script("helped"))

    def boss_script(request: LlmRequest) -> list[LlmResponse]:
        if last_tool_result(request) is None:
            return [call_response("helper", {"request": "do it"}, "ask-1")]
        return [text_response("done")]

    boss_model = ScriptedLlm(script=boss_script)
    helper = agent(helper_model, name="helper")
    root = LlmAgent(name="boss", model=boss_model, tools=[AgentTool(helper)], instruction="Delegate.")
    events = await collect(instrument_runner(runner(root), session=client))
    assert final_text(events) == "done"
    wait_run_end(kit)
    nodes = started(kit)
    assert len({e["runId"] for e in nodes}) == 1  # the nested invocation is part of the caller's run
    (tool,) = [e for e in nodes if e["nodeId"] == "tool:helper"]
    (inner,) = [e for e in nodes if e["nodeId"] == "llm:step@helper"]
    assert inner["agentPath"] == ["boss", "helper"]
    (helper_agent,) = [e for e in nodes if e["nodeId"] == "agent:helper"]
    assert helper_agent["parentInstanceId"] == tool["instanceId"]
    assert [e["agent"] for e in nodes if e["nodeId"] == "llm:step"] == ["boss", "boss"]


async def test_workflow_agents_report_the_agent_of_each_step(hub: tuple[KitHub, graphmind.Client]) -> None:
    kit, client = hub
    first = agent(ScriptedLlm(script=reply_script("one")), name="first")
    second = agent(ScriptedLlm(script=reply_script("two")), name="second")
    events = await collect(
        instrument_runner(
            runner(SequentialAgent(name="pipeline", sub_agents=[first, second])), session=client
        )
    )
    assert final_text(events) == "two"
    wait_run_end(kit)
    steps = {e["nodeId"]: e["agentPath"] for e in started(kit) if e["kind"] == "llm"}
    assert steps == {"llm:step@first": ["pipeline", "first"], "llm:step@second": ["pipeline", "second"]}


def test_a_single_agent_keeps_llm_step(fakehub: Any, gm: graphmind.Client) -> None:
    import asyncio

    model = ScriptedLlm(script=reply_script("hi"))
    asyncio.run(collect(instrument_runner(runner(agent(model)), session=gm)))
    fakehub.wait_for(lambda: bool(fakehub.of_type(proto.RUN_FINISHED)), what="the run's end")
    ids = [e["nodeId"] for e in fakehub.of_type(proto.NODE_STARTED)]
    assert ids == ["agent:assistant", "llm:step"]


# ---- the shared kit's two-agent cases (graphmind.testing.team), on FakeHub and the real hub ----
EDITED = "please refund invoice 42"


def _transfer(_request: LlmRequest) -> list[LlmResponse]:
    return [call_response("transfer_to_agent", {"agent_name": "billing"}, "transfer-1")]


class AdkTeam(TeamSubject):
    root, other = "triage", "billing"

    def __init__(self) -> None:
        self.billing = ScriptedLlm(script=reply_script("paid in full"))

    def make(self) -> Runner:
        self.billing = ScriptedLlm(script=reply_script("paid in full"))
        triage = LlmAgent(
            name="triage",
            model=ScriptedLlm(script=_transfer),
            instruction="Route the question.",
            sub_agents=[agent(self.billing, name="billing")],
        )
        return runner(triage)

    def instrument(self, thing: Runner, session: graphmind.Client) -> Runner:
        return instrument_runner(thing, session=session)

    def undo(self, thing: Runner) -> None:
        uninstrument_runner(thing)

    async def acall_team(self, thing: Runner) -> Any:
        return await collect(thing, "what about invoice 42?")

    @property
    def other_model_calls(self) -> int:
        return self.billing.calls

    def edit_handoff(self, handed: Any) -> Any:
        messages = [{**m, "content": EDITED} if m["role"] == "user" else m for m in handed["messages"]]
        return {**handed, "messages": messages}

    def check_handoff_edited(self, edited: Any) -> None:
        first = self.billing.requests[0]
        texts = [p.text for c in first.contents for p in c.parts or [] if p.text]
        assert EDITED in texts and "what about invoice 42?" not in texts, texts

    def check_injected(self, result: Any, value: Any) -> None:
        assert final_text(result) == value


@pytest.mark.parametrize("case", TEAM_CASES)
async def test_team(case: str, kit_hub: Any) -> None:
    await run_team_case(case, AdkTeam(), hub=kit_hub)
