"""A team: an agent delegates to another through a tool (docs/pydantic-ai.md, "Teams of agents").
The shared kit's two-agent cases (no handoff node: the delegation is the tool's node)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pa_helpers import ScriptedModel, last_tool_return
from pydantic_ai import Agent

import graphmind
from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case
from graphmind_pydantic_ai import instrument_pydantic_ai, uninstrument_pydantic_ai
from graphmind_pydantic_ai.testing import call


class Delegation(TeamSubject):
    root, other = "triage", "billing"
    handoff = False  # the delegation is the `ask_billing` tool node; no handoff gate of its own

    def __init__(self) -> None:
        self.billing_model = ScriptedModel(["refund sent"])
        self.triage_model = ScriptedModel(
            [lambda m: call("ask_billing", task="refund order 7") if last_tool_return(m) is None else "done"]
        )
        self.billing: Agent[None, str] | None = None

    def make(self) -> Any:
        billing: Agent[None, str] = Agent(self.billing_model.model, name="billing")
        triage: Agent[None, str] = Agent(self.triage_model.model, name="triage")
        self.billing = billing

        @triage.tool_plain(name="ask_billing")
        async def ask_billing(task: str) -> str:
            return (await billing.run(task)).output

        return triage

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        assert self.billing is not None
        instrument_pydantic_ai(self.billing, session=session)
        return instrument_pydantic_ai(thing, session=session)

    def undo(self, thing: Any) -> None:
        uninstrument_pydantic_ai(thing)
        if self.billing is not None:
            uninstrument_pydantic_ai(self.billing)

    async def acall_team(self, thing: Any) -> Any:
        return (await thing.run("I was charged twice")).output

    @property
    def other_model_calls(self) -> int:
        return self.billing_model.calls


@pytest.mark.parametrize("case", TEAM_CASES)
async def test_team(case: str, kit_hub: Callable[[], Any] | None) -> None:
    await run_team_case(case, Delegation(), hub=kit_hub)
