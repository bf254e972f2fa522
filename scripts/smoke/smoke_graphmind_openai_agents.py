"""Wheel smoke for graphmind-openai-agents: instrument the Agents SDK and run one agent with a tool
detached, with no network (an in-process model answers a tool call, then text)."""

from typing import Any

import agents.run_internal.run_loop
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import graphmind
from graphmind_openai_agents import __version__, instrument_openai_agents, uninstrument_openai_agents

set_tracing_disabled(True)  # the SDK would try to export its traces to OpenAI


class Scripted(Model):
    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        if any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in input):
            text = ResponseOutputText(type="output_text", text="sunny", annotations=[])
            out: list[Any] = [
                ResponseOutputMessage(
                    id="m", type="message", role="assistant", status="completed", content=[text]
                )
            ]
        else:
            out = [
                ResponseFunctionToolCall(
                    id="f", type="function_call", call_id="c1", name="weather", arguments="{}"
                )
            ]
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool
def weather() -> str:
    """The weather."""
    return "sunny"


session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
original = agents.run_internal.run_loop.get_model
assert instrument_openai_agents(session=session)
assert instrument_openai_agents(session=session)  # twice is harmless
result = Runner.run_sync(Agent(name="smoke", tools=[weather], model=Scripted()), "weather?")
assert result.final_output == "sunny", result.final_output
uninstrument_openai_agents()
assert agents.run_internal.run_loop.get_model is original
assert session.stats()["events"] >= 8, session.stats()  # a run, two model steps and a tool
session.dispose()
print(f"graphmind-openai-agents {__version__} smoke ok")
