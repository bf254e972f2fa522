"""A two-agent crew on the loopback fake provider: the researcher (tool `lookup`) delegates to the
writer (tool `draft`); each tool counts its calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crewai import LLM, Agent, Crew, Process, Task
from crewai.tools import tool

from graphmind.testing import threads
from graphmind_openai.testing import FakeOpenAI

# The provider's answers for one kickoff, in order (researcher, writer, writer, researcher).
SCRIPT: list[Any] = [
    FakeOpenAI.tool_call("lookup", {"topic": "cairo"}),
    FakeOpenAI.tool_call(
        "delegate_work_to_coworker", {"task": "write it", "context": "cairo facts", "coworker": "writer"}
    ),
    FakeOpenAI.tool_call("draft", {"text": "cairo"}),
    "writer done",
    "researcher done",
]


@dataclass
class Tools:
    calls: list[tuple[str, Any]] = field(default_factory=list)
    fail: dict[str, int] = field(default_factory=dict)  # tool -> failures left

    def count(self, name: str) -> int:
        return sum(1 for n, _ in self.calls if n == name)

    def make(self) -> tuple[Any, Any]:
        @tool("lookup")
        def lookup(topic: str) -> str:
            """Look a topic up."""
            self.calls.append(("lookup", topic))
            if self.fail.get("lookup"):
                self.fail["lookup"] -= 1
                raise ConnectionError("lookup service down")
            return f"facts about {topic}"

        @tool("draft")
        def draft(text: str) -> str:
            """Draft a text."""
            self.calls.append(("draft", text))
            return f"draft: {text}"

        return lookup, draft


def crew(fake: FakeOpenAI, tools: Tools, *, delegate: bool = True) -> Crew:
    llm = LLM(model="openai/gpt-4o-mini", base_url=fake.base_url, api_key="test")
    lookup, draft = tools.make()
    researcher = Agent(
        role="researcher", goal="research", backstory="b", tools=[lookup], llm=llm, allow_delegation=delegate
    )
    writer = Agent(role="writer", goal="write", backstory="b", tools=[draft], llm=llm)
    task = Task(description="Research cairo", expected_output="text", agent=researcher, name="research")
    return Crew(agents=[researcher, writer], tasks=[task], process=Process.sequential)


def contents(body: dict[str, Any]) -> str:
    """A provider request's messages as one text (what the model was sent)."""
    return "\n".join(str(m.get("content")) for m in body.get("messages", []))


def sync_call(fn: Any) -> Any:
    """`fn()` on a thread without an event loop, its result or its exception: CrewAI refuses a sync
    kickoff from a thread whose loop runs (the kit calls the sync path from its async test), as an
    app calls it from plain sync code. A kickoff takes as long as it takes: no timeout here."""
    return threads.sync_call(fn, timeout=None)
