"""The shared gate matrix (graphmind.testing.gate_matrix) on CrewAI's own objects: an agent's model
call (a one-agent crew with no tools, `Crew.kickoff`, its async cases through `kickoff_async`) and a
tool call (a `@tool`'s `run`, as the executor calls it with native function calling).

Every case runs twice (the `kit_hub` fixture, graphmind_server.testing.pytest_plugin): against core's
in-process FakeHub, and against the real hub process driven as the viewer drives it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from crew_helpers import sync_call
from crewai import LLM, Agent, Crew, Task
from crewai.crews.crew_output import CrewOutput
from crewai.tools import tool

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_crewai import instrument_crewai, uninstrument_crewai
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import KitHub

REPLY = "the real reply"
# The cases that need a stream: CrewAI's agent step returns the whole reply (its own streaming is
# an event of the crew's output, not the step's result), so neither subject streams.
STREAM_CASES = {"stream_tee", "stream_tee_async", "stream_cut_short", "stream_cut_short_async"}
# 20 tool calls at once each hold a worker thread.
_THREADS = anyio.CapacityLimiter(32)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default_reply=REPLY) as fake:
        yield fake


class ModelSubject(GateSubject):
    """One model request per kickoff: a crew of one agent with no tools, which answers at once."""

    node_id = "llm:step"
    injected = "from the debugger"
    error_type = Exception  # CrewAI's own provider error (the OpenAI SDK's, re-raised)

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake
        self.start = fake.request_count

    @property
    def real_calls(self) -> int:
        return self.fake.request_count - self.start

    def make(self) -> Crew:
        llm = LLM(model="openai/gpt-4o-mini", base_url=self.fake.base_url, api_key="test", max_retries=0)
        agent = Agent(role="writer", goal="write", backstory="b", llm=llm, max_retry_limit=0)
        return Crew(agents=[agent], tasks=[Task(description="Write", expected_output="text", agent=agent)])

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        instrument_crewai(session=session)
        return thing

    def undo(self, thing: Any) -> Any:
        uninstrument_crewai()
        return thing

    def call(self, thing: Any) -> Any:
        return sync_call(thing.kickoff)

    async def acall(self, thing: Any) -> Any:
        return await anyio.to_thread.run_sync(thing.kickoff, limiter=_THREADS)

    def fail_next(self) -> None:
        self.fake.script([FakeOpenAI.error(400, "the provider said no")])

    def check_real(self, result: Any) -> None:
        assert isinstance(result, CrewOutput) and result.raw == REPLY

    def check_injected(self, result: Any, value: Any) -> None:
        assert isinstance(result, CrewOutput) and result.raw == value

    def edit(self, original: Any) -> Any:
        messages = [dict(m) for m in original["messages"]]
        messages[-1]["content"] = "an edited prompt"
        return {**original, "messages": messages}

    def check_edited(self, result: Any, edited: Any) -> None:
        self.check_real(result)
        assert self.fake.requests[-1].body["messages"][-1]["content"] == "an edited prompt"


class ToolSubject(GateSubject):
    """A `@tool`'s `run(**arguments)`, the call CrewAI's executor makes for a native tool call."""

    node_id = "tool:lookup"
    injected = "from the debugger"
    error_type = ConnectionError

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.fail = False

    @property
    def real_calls(self) -> int:
        return len(self.calls)

    def make(self) -> Any:
        @tool("lookup")
        def lookup(topic: str) -> str:
            """Look a topic up."""
            self.calls.append(topic)
            if self.fail:
                self.fail = False
                self.raised = ConnectionError("the lookup service is down")
                raise self.raised
            return f"facts about {topic}"

        return lookup

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        instrument_crewai(session=session)
        return thing

    def undo(self, thing: Any) -> Any:
        uninstrument_crewai()
        return thing

    def call(self, thing: Any) -> Any:
        return thing.run(topic="cairo")

    async def acall(self, thing: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: thing.run(topic="cairo"), limiter=_THREADS)

    def fail_next(self) -> None:
        self.fail = True

    def check_real(self, result: Any) -> None:
        assert result == f"facts about {self.calls[-1]}"

    def check_injected(self, result: Any, value: Any) -> None:
        assert result == value

    def edit(self, original: Any) -> Any:
        assert original == {"topic": "cairo"}
        return {"topic": "alexandria"}

    def check_edited(self, result: Any, edited: Any) -> None:
        assert self.calls[-1] == "alexandria" and result == "facts about alexandria"


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_model(case: str, kit_hub: Callable[[], KitHub] | None, fake: FakeOpenAI) -> None:
    if case in STREAM_CASES:
        pytest.skip("a CrewAI agent step is not a stream (its result is the whole reply)")
    if case == "twenty_async_holds":
        # Measured with no GraphMind: 20 kickoffs on 20 threads, each step made to take 1 s, reach
        # their model call at most 14 at a time (CrewAI's Flow runs each step through a shared
        # worker pool), so 20 steps are never in flight at once, held or not. The tool subject runs it.
        pytest.skip("CrewAI itself never has 20 agent steps in flight at once (docs/crewai.md)")
    await run_case(case, ModelSubject(fake), hub=kit_hub)


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_tool(case: str, kit_hub: Callable[[], KitHub] | None) -> None:
    if case in STREAM_CASES:
        pytest.skip("a CrewAI tool returns its result whole")
    await run_case(case, ToolSubject(), hub=kit_hub)
