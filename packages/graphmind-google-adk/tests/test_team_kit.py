"""The shared kit's two-agent cases (graphmind.testing.team) on ADK: a root agent `triage` whose
scripted model transfers to its sub-agent `billing` with `transfer_to_agent`, on FakeHub and on the
real hub process."""

from __future__ import annotations

from typing import Any

import pytest
from adk_helpers import ScriptedLlm, agent, call_response, collect, final_text, reply_script, runner
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner

import graphmind
from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case
from graphmind_google_adk import instrument_runner, uninstrument_runner

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
