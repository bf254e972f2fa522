"""Wheel smoke for graphmind-pydantic-ai: instrument an agent (a FunctionModel plays the model, one
tool call) and run it detached, with no network; undo it and run it bare."""

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import graphmind
from graphmind_pydantic_ai import (
    GraphmindCapability,
    __version__,
    instrument_pydantic_ai,
    uninstrument_pydantic_ai,
)


def model(messages: list, info: AgentInfo) -> ModelResponse:
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if not returns:
        return ModelResponse(parts=[ToolCallPart("search", {"q": "cats"}, tool_call_id="call_1")])
    return ModelResponse(parts=[TextPart(f"saw: {returns[-1].content}")])


agent = Agent(FunctionModel(model), name="smoke")


@agent.tool_plain
def search(q: str) -> str:
    return f"results for {q}"


session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
own = dict(vars(agent))
assert instrument_pydantic_ai(agent, session=session) is agent
assert instrument_pydantic_ai(agent, session=session) is agent  # twice is harmless
assert agent.run_sync("find cats").output == "saw: results for cats"
events = session.stats()["events"]
assert events >= 6, session.stats()  # the run, two steps and the tool: started and finished
uninstrument_pydantic_ai(agent)
assert dict(vars(agent)) == own
assert agent.run_sync("find cats").output == "saw: results for cats"
built = Agent(
    FunctionModel(model), name="built", tools=[search], capabilities=[GraphmindCapability(session=session)]
)
assert built.run_sync("find cats").output == "saw: results for cats"
session.dispose()
print(f"graphmind-pydantic-ai {__version__} smoke ok")
