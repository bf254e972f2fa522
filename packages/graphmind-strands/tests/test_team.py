"""The shared two-agent kit (graphmind.testing.team) on a Strands swarm: a triage agent hands the
work to a billing agent with Strands' own `handoff_to_agent` tool; both models Strands'
`OpenAIModel` on the loopback fake. On FakeHub and on the real hub."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from strands import Agent
from strands.multiagent import Swarm
from strands_helpers import model

import graphmind
from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import KitHub
from graphmind_strands import instrument_strands, uninstrument_strands

REFUNDED = "billing: refunded"


class StrandsTeam(TeamSubject):
    injected = "answered by the debugger"

    def __init__(self) -> None:
        self.fake = FakeOpenAI()
        self.fake.default_reply = self._reply  # type: ignore[assignment]
        self.fake.start()
        self.billing_requests: list[Any] = []

    def _reply(self, body: dict[str, Any]) -> Any:
        system = body["messages"][0]["content"]
        if "bill" in str(system):
            self.billing_requests.append(body)
            return REFUNDED
        if body["messages"][-1].get("role") == "tool":
            return "triage: handed over"
        return FakeOpenAI.tool_call(
            "handoff_to_agent", {"agent_name": "billing", "message": "a refund for order 7"}
        )

    def make(self) -> Swarm:
        triage = Agent(
            model=model(self.fake), name="triage", system_prompt="You triage.", callback_handler=None
        )
        billing = Agent(
            model=model(self.fake), name="billing", system_prompt="You bill.", callback_handler=None
        )
        return Swarm([triage, billing], entry_point=triage)

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        instrument_strands(session=session)
        return thing

    def undo(self, thing: Any) -> None:
        uninstrument_strands()
        self.fake.stop()

    async def acall_team(self, thing: Any) -> Any:
        return await thing.invoke_async("I want a refund")

    @property
    def other_model_calls(self) -> int:
        return len(self.billing_requests)

    def edit_handoff(self, handed: Any) -> Any:
        return {**handed, "message": "a refund for order 8"}

    def check_handoff_edited(self, edited: Any) -> None:
        sent = str(self.billing_requests[0]["messages"])
        assert "order 8" in sent and "order 7" not in sent, sent

    def check_injected(self, result: Any, value: Any) -> None:
        assert "billing" not in result.results, "the target never ran"


@pytest.mark.parametrize("case", TEAM_CASES)
async def test_team(case: str, kit_hub: Callable[[], KitHub] | None) -> None:
    await run_team_case(case, StrandsTeam(), hub=kit_hub)
