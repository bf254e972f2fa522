"""Wheel smoke for graphmind-strands: instrument the process (a scripted Strands `Model` plays the
model, one tool call) and run an agent detached, with no network; undo it and run it bare; then one
agent with its own `GraphmindHooks`."""

import json
from typing import Any

from strands import Agent, tool
from strands.models import Model

import graphmind
from graphmind_strands import GraphmindHooks, __version__, instrument_strands, uninstrument_strands


class Scripted(Model):
    """Asks for `search(q="cats")`, then answers with what it returned (Strands' stream events)."""

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {"model_id": "scripted"}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> Any:
        results = [b["toolResult"] for m in messages for b in m["content"] if "toolResult" in b]
        yield {"messageStart": {"role": "assistant"}}
        if not results:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "call_1", "name": "search"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"q": "cats"})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        yield {"contentBlockDelta": {"delta": {"text": "saw: " + results[-1]["content"][0]["text"]}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


@tool
def search(q: str) -> str:
    """Search the web.

    Args:
        q: what to look for
    """
    return f"results for {q}"


def agent(**kwargs: Any) -> Agent:
    return Agent(model=Scripted(), tools=[search], name="smoke", callback_handler=None, **kwargs)


session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
assert instrument_strands(session=session)
assert instrument_strands(session=session)  # twice is harmless
assert str(agent()("find cats")).strip() == "saw: results for cats"
events = session.stats()["events"]
assert events >= 8, session.stats()  # the run, two steps and the tool: started and finished
uninstrument_strands()
assert str(agent()("find cats")).strip() == "saw: results for cats"
assert session.stats()["events"] == events, "undone: no more events"
assert str(agent(hooks=[GraphmindHooks(session=session)])("find cats")).strip() == "saw: results for cats"
assert session.stats()["events"] > events
session.dispose()
print(f"graphmind-strands {__version__} smoke ok")
