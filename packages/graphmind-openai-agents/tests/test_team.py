"""A team: a triage agent hands off to a billing agent, which calls a tool (docs/openai-agents.md,
"Teams of agents"). The shared kit's two-agent cases on both hubs (the real hub process included),
on the SDK's own models against the loopback fake provider, which scripts which agent answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents_helpers import model_for

import graphmind
from graphmind.testing import FakeHub
from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case
from graphmind_openai.testing import FakeOpenAI
from graphmind_openai_agents import instrument_openai_agents, uninstrument_openai_agents

TRIAGE = "Route the customer to the right agent."
BILLING = "You handle billing questions."
ASK = "I was charged twice for order 7"
REFUNDED = "Refund of order 7 sent."


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def _agent_of(body: dict[str, Any]) -> str:
    system = next((m.get("content") for m in _messages(body) if m.get("role") == "system"), "")
    return "billing" if system == BILLING else "triage"


def script(body: dict[str, Any]) -> Any:
    """The fake provider's reply: triage hands off; billing calls `refund`, then answers."""
    if _agent_of(body) == "triage":
        return FakeOpenAI.tool_call("transfer_to_billing", {})
    if any(m.get("role") == "tool" and "refunded" in str(m.get("content")) for m in _messages(body)):
        return REFUNDED
    return FakeOpenAI.tool_call("refund", {"order": "7"})


class Team(TeamSubject):
    root, other = "triage", "billing"
    injected = "Handled by a person: refund approved."

    def __init__(self) -> None:
        self.fake = FakeOpenAI(default_reply=script).__enter__()
        self.refunds: list[str] = []

    def make(self) -> Any:
        model = model_for(self.fake)

        @function_tool
        def refund(order: str) -> str:
            """Refund an order."""
            self.refunds.append(order)
            return f"order {order} refunded"

        billing = Agent(name="billing", instructions=BILLING, tools=[refund], model=model)
        return Agent(name="triage", instructions=TRIAGE, handoffs=[billing], model=model)

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        assert instrument_openai_agents(session=session)
        return thing

    def undo(self, thing: Any) -> None:
        uninstrument_openai_agents()
        self.fake.__exit__(None, None, None)

    async def acall_team(self, thing: Any) -> Any:
        return await Runner.run(thing, ASK)

    def _billing_requests(self) -> list[dict[str, Any]]:
        return [
            r.body for r in self.fake.requests if isinstance(r.body, dict) and _agent_of(r.body) == "billing"
        ]

    @property
    def other_model_calls(self) -> int:
        return len(self._billing_requests())

    def edit_handoff(self, handed: Any) -> Any:
        items = list(handed["input"])
        first = dict(items[0])
        first["content"] = "EDITED: refund order 8 instead"
        return {"input": [first, *items[1:]]}

    def check_handoff_edited(self, edited: Any) -> None:
        first = self._billing_requests()[0]
        texts = [str(m.get("content")) for m in _messages(first)]
        assert "EDITED: refund order 8 instead" in texts, texts
        assert ASK not in texts, "the edit replaced the customer's message"

    def check_injected(self, result: Any, value: Any) -> None:
        assert result.final_output == value
        assert self.refunds == []


@pytest.mark.parametrize("case", TEAM_CASES)
async def test_team(case: str, kit_hub: Callable[[], Any] | None) -> None:
    await run_team_case(case, Team(), hub=kit_hub)


async def test_the_team_run_draws_two_agents_and_the_billing_tool(
    fakehub: FakeHub, gm: graphmind.Client
) -> None:
    team = Team()
    thing = team.instrument(team.make(), gm)
    try:
        result = await team.acall_team(thing)
    finally:
        team.undo(thing)
    assert result.final_output == REFUNDED and team.refunds == ["7"]
    fakehub.wait_for(lambda: len(fakehub.of_type("run.finished")) == 1, what="the run's end")
    started = [(e["nodeId"], e.get("agent")) for e in fakehub.of_type("node.started")]
    assert started == [
        ("llm:step", "triage"),
        ("handoff:triage->billing", "triage"),
        ("llm:step@billing", "billing"),
        ("tool:refund", "billing"),
        ("llm:step@billing", "billing"),
    ]
