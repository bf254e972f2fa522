"""The agents the tests run: a scripted FunctionModel, and tools that count their calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent

from graphmind.testing.threads import in_a_thread, sync_call
from graphmind_pydantic_ai.testing import ScriptedModel, call, last_tool_return

__all__ = [
    "ProviderError",
    "ScriptedModel",
    "Search",
    "call",
    "in_a_thread",
    "last_tool_return",
    "search_then_answer",
    "sync_call",
    "tool_agent",
]


class ProviderError(Exception):
    """What a failing model or tool raises (the framework retries neither by itself)."""


@dataclass
class Search:
    """The `search` tool's body: counts calls, records arguments, fails once when told."""

    calls: int = 0
    seen: list[str] = field(default_factory=list)
    fail: BaseException | None = None

    def run(self, q: str) -> str:
        self.calls += 1
        self.seen.append(q)
        if self.fail is not None:
            error, self.fail = self.fail, None
            raise error
        return f"results for {q}"


def search_then_answer(messages: list[Any]) -> Any:
    """The scripted model's turn: ask for `search(q="cats")` until a tool result is in the
    history, then answer with it (so concurrent runs of one agent each call the tool once)."""
    seen = last_tool_return(messages)
    return call("search", q="cats") if seen is None else f"saw: {seen}"


def tool_agent(search: Search, model: ScriptedModel, name: str = "researcher") -> Agent[None, str]:
    """An agent whose model calls `search(q="cats")` and then answers with what the tool returned."""
    agent: Agent[None, str] = Agent(model.model, name=name)

    @agent.tool_plain(name="search")
    def search_tool(q: str) -> str:
        """Search the web."""
        return search.run(q)

    return agent
