"""Wheel smoke for graphmind-google-adk: one ADK invocation with GraphmindPlugin, detached, with no
network (a BaseLlm of its own that calls a tool, then answers), through instrument_runner and undone."""

import asyncio
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

import graphmind
from graphmind_google_adk import GraphmindPlugin, __version__, instrument_runner, uninstrument_runner


class Offline(BaseLlm):
    model: str = "offline"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        answered = any(p.function_response for c in llm_request.contents for p in c.parts or [])
        part = (
            types.Part(text="Hello from ADK")
            if answered
            else types.Part(function_call=types.FunctionCall(id="c1", name="add", args={"a": 1, "b": 2}))
        )
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def add(a: int, b: int) -> dict:
    """Adds."""
    return {"sum": a + b}


async def main() -> None:
    session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    agent = LlmAgent(name="smoke", model=Offline(), tools=[add])
    runner = Runner(
        app=App(name="smoke", root_agent=agent),
        session_service=InMemorySessionService(),
        auto_create_session=True,
    )
    assert instrument_runner(runner, session=session) is runner
    assert instrument_runner(runner, session=session) is runner  # twice is harmless
    assert [p.name for p in runner.plugin_manager.plugins] == ["graphmind"]
    message = types.Content(role="user", parts=[types.Part(text="hi")])
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]
    assert events[-1].content.parts[0].text == "Hello from ADK", events
    uninstrument_runner(runner)
    assert runner.plugin_manager.plugins == []
    assert session.stats()["events"] >= 6  # the run, the agent, two model steps, the tool
    assert isinstance(GraphmindPlugin(session), GraphmindPlugin)
    session.dispose()


asyncio.run(main())
print(f"graphmind-google-adk {__version__} smoke ok")
