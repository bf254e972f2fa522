"""Text (ReAct) tool calling, for an LLM without native function calling: CrewAI parses the
model's `Action:` and calls `CrewStructuredTool.invoke`, which the `run` row does not see."""

from __future__ import annotations

from typing import Any

from crew_helpers import Tools
from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM

import graphmind
from graphmind.testing import FakeHub
from graphmind_crewai import instrument_crewai

SEEN: list[str] = []  # what the model was sent, each call (BaseLLM is a pydantic model: no own list)


class ReAct(BaseLLM):
    """Asks for `lookup` in the ReAct text format, then answers."""

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        text = "\n".join(str(m.get("content")) for m in messages)
        SEEN.append(text)
        if len(SEEN) == 1:
            return 'Thought: I should look it up.\nAction: lookup\nAction Input: {"topic": "cairo"}'
        return "Thought: I know now.\nFinal Answer: done"

    def supports_function_calling(self) -> bool:
        return False


def _crew(tools: Tools, llm: ReAct) -> Crew:
    lookup, _ = tools.make()
    agent = Agent(role="researcher", goal="research", backstory="b", tools=[lookup], llm=llm)
    return Crew(agents=[agent], tasks=[Task(description="Research", expected_output="text", agent=agent)])


def test_a_text_tool_call_is_a_gated_node_and_a_before_inject_runs_no_body() -> None:
    tools = Tools()
    llm = ReAct(model="react")
    SEEN.clear()
    with FakeHub(pause_on_error="off") as hub:
        hub.set_debug(breakpoints=[("tool:lookup", "before")])
        hub.auto_answer("inject", "INJECTED FACT")
        session = graphmind.Client(app="react", url=hub.url)
        assert session.ready(10)
        instrument_crewai(session=session)
        out = _crew(tools, llm).kickoff()
        hub.wait_for(lambda: bool(hub.of_type("run.finished")))
        started = [e["nodeId"] for e in hub.of_type("node.started")]
        session.dispose()
    assert out.raw == "done"
    assert "tool:lookup" in started and tools.calls == []
    assert "INJECTED FACT" in SEEN[-1]
