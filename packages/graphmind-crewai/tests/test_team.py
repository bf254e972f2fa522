"""The shared kit's two-agent cases (graphmind.testing.team) on a CrewAI crew: the researcher
delegates to the writer through CrewAI's own coworker tool, on both hubs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from crew_helpers import Tools, contents, crew

import graphmind
from graphmind.testing.team import TEAM_CASES, TeamSubject, run_team_case
from graphmind_crewai import instrument_crewai, uninstrument_crewai
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import KitHub


class Delegation(TeamSubject):
    root, other = "researcher", "writer"
    injected = "answered by the debugger"

    def __init__(self) -> None:
        self.fake = FakeOpenAI(default_reply=self.reply).start()
        self.writer_requests: list[dict[str, Any]] = []
        self.researcher_requests: list[dict[str, Any]] = []

    def reply(self, body: dict[str, Any]) -> Any:
        system = str(body["messages"][0].get("content"))
        if "writer" in system.split("\n", 1)[0]:
            self.writer_requests.append(body)
            return "writer done"
        self.researcher_requests.append(body)
        if not any(m.get("role") == "tool" for m in body["messages"]):
            arguments = {"task": "write it", "context": "cairo facts", "coworker": "writer"}
            return {
                "content": None,
                "tool_calls": [
                    {"id": "call_1", "name": "delegate_work_to_coworker", "arguments": json.dumps(arguments)}
                ],
            }
        return "researcher done"

    def make(self) -> Any:
        return crew(self.fake, Tools())

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        instrument_crewai(session=session)
        return thing

    def undo(self, thing: Any) -> None:
        uninstrument_crewai()
        self.fake.stop()

    async def acall_team(self, thing: Any) -> Any:
        return await anyio.to_thread.run_sync(thing.kickoff)

    @property
    def other_model_calls(self) -> int:
        return len(self.writer_requests)

    def edit_handoff(self, handed: Any) -> Any:
        return {**handed, "task": "write a haiku"}

    def check_handoff_edited(self, edited: Any) -> None:
        assert "write a haiku" in contents(self.writer_requests[0])

    def check_injected(self, result: Any, value: Any) -> None:
        assert result.raw == "researcher done"
        assert value in contents(self.researcher_requests[-1])  # the delegation's result, to the model


@pytest.mark.parametrize("case", TEAM_CASES)
async def test_team(case: str, kit_hub: Callable[[], KitHub] | None) -> None:
    await run_team_case(case, Delegation(), hub=kit_hub)
