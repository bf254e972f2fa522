"""Wheel smoke for graphmind-crewai: instrument CrewAI and run a one-agent crew detached, with no
network (an in-process LLM answers), then one tool call."""

import os
import tempfile

os.environ["HOME"] = tempfile.mkdtemp(prefix="gm-smoke-crewai-")  # CrewAI writes there at import
os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"

from typing import Any

import crewai.crew
from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool

import graphmind
from graphmind_crewai import __version__, instrument_crewai, uninstrument_crewai


class Scripted(BaseLLM):
    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        return "Thought: I know it.\nFinal Answer: sunny"


@tool("weather")
def weather(city: str) -> str:
    """The weather."""
    return f"sunny in {city}"


session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
original = crewai.crew.Crew.kickoff
assert instrument_crewai(session=session)
assert instrument_crewai(session=session)  # twice is harmless
agent = Agent(role="forecaster", goal="forecast", backstory="b", llm=Scripted(model="scripted"))
result = Crew(
    agents=[agent], tasks=[Task(description="Weather?", expected_output="one word", agent=agent)]
).kickoff()
assert result.raw == "sunny", result.raw
assert weather.run(city="Cairo") == "sunny in Cairo"
uninstrument_crewai()
assert crewai.crew.Crew.kickoff is original
assert session.stats()["events"] >= 8, session.stats()  # a run, a task, a model step and a tool
session.dispose()
print(f"graphmind-crewai {__version__} smoke ok")
