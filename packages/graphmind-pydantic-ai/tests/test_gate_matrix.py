"""The shared gate matrix (graphmind.testing.gate_matrix) on Pydantic AI's own objects: an agent's
model request (a FunctionModel scripted by `ScriptedModel`: `run_sync`, `run`, `run_stream_sync`,
`run_stream`) and an agent's tool call (a function tool that counts its calls).

Every case runs twice (the `kit_hub` fixture, graphmind_server.testing.pytest_plugin): against core's
in-process FakeHub, and against the real hub process (one `graphmind serve` for the module) driven as
the viewer drives it (`graphmind_server.testing.KitHub`)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from pa_helpers import (
    ProviderError,
    ScriptedModel,
    Search,
    in_a_thread,
    search_then_answer,
    sync_call,
    tool_agent,
)
from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.run import AgentRunResult

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_pydantic_ai import instrument_pydantic_ai, uninstrument_pydantic_ai
from graphmind_server.testing import KitHub

REPLY = "the real reply"


class ModelSubject(GateSubject):
    """One model request per run: the agent has no tools, the model answers with text."""

    node_id = "llm:step"
    error_type = ProviderError
    streams = True
    injected = "from the debugger"

    def __init__(self) -> None:
        self.models: list[ScriptedModel] = []

    @property
    def real_calls(self) -> int:
        return sum(m.calls for m in self.models)

    def make(self) -> Agent[None, str]:
        model = ScriptedModel([REPLY], chunk=4)
        self.models.append(model)
        return Agent(model.model, name="writer")

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        return instrument_pydantic_ai(thing, session=session)

    def undo(self, thing: Any) -> Any:
        return uninstrument_pydantic_ai(thing)

    def call(self, thing: Any) -> Any:
        return sync_call(lambda: thing.run_sync("hi"))

    async def acall(self, thing: Any) -> Any:
        return await thing.run("hi")

    def stream(self, thing: Any) -> Iterator[str]:
        def make() -> Iterator[str]:
            return thing.run_stream_sync("hi").stream_text(delta=True, debounce_by=None)  # type: ignore[no-any-return]

        return in_a_thread(make)

    async def astream(self, thing: Any) -> AsyncIterator[str]:
        async with thing.run_stream("hi") as result:
            async for text in result.stream_text(delta=True, debounce_by=None):
                yield text

    def fail_next(self) -> None:
        self.raised = ProviderError("the provider said no")
        self.models[-1].add(self.raised)

    def check_real(self, result: Any) -> None:
        assert isinstance(result, AgentRunResult) and result.output == REPLY

    def check_injected(self, result: Any, value: Any) -> None:
        assert isinstance(result, AgentRunResult) and result.output == value
        reply = result.all_messages()[-1]
        assert isinstance(reply, ModelResponse) and isinstance(reply.parts[0], TextPart)

    def check_stream(self, items: list[Any]) -> None:
        assert len(items) > 1 and all(isinstance(i, str) for i in items)
        assert "".join(items) == REPLY

    def edit(self, original: Any) -> Any:
        messages = [dict(m) for m in original["messages"]]
        messages[-1]["content"] = "an edited prompt"
        return {**original, "messages": messages}

    def check_edited(self, result: Any, edited: Any) -> None:
        self.check_real(result)
        request = self.models[-1].seen[-1][-1]
        assert isinstance(request, ModelRequest)
        assert [p.content for p in request.parts if isinstance(p, UserPromptPart)] == ["an edited prompt"]


class ToolSubject(GateSubject):
    """One `search` call per run: the model asks for it, then answers with what it returned."""

    node_id = "tool:search"
    error_type = ProviderError
    injected = "from the debugger"

    def __init__(self) -> None:
        self.searches: list[Search] = []

    @property
    def real_calls(self) -> int:
        return sum(s.calls for s in self.searches)

    def make(self) -> Agent[None, str]:
        search = Search()
        self.searches.append(search)
        return tool_agent(search, ScriptedModel([search_then_answer]))

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        return instrument_pydantic_ai(thing, session=session)

    def undo(self, thing: Any) -> Any:
        return uninstrument_pydantic_ai(thing)

    def call(self, thing: Any) -> Any:
        return sync_call(lambda: thing.run_sync("find cats"))

    async def acall(self, thing: Any) -> Any:
        return await thing.run("find cats")

    def fail_next(self) -> None:
        self.raised = self.searches[-1].fail = ProviderError("the search backend said no")

    def check_real(self, result: Any) -> None:
        assert isinstance(result, AgentRunResult) and result.output == "saw: results for cats"

    def check_injected(self, result: Any, value: Any) -> None:
        assert isinstance(result, AgentRunResult) and result.output == f"saw: {value}"

    def edit(self, original: Any) -> Any:
        assert original == {"q": "cats"}
        return {"q": "dogs"}

    def check_edited(self, result: Any, edited: Any) -> None:
        assert self.searches[-1].seen[-1] == "dogs"
        assert isinstance(result, AgentRunResult) and result.output == "saw: results for dogs"


def _reader_closes_early_bare() -> bool:
    """Whether this Pydantic AI lets an app leave `async with agent.run_stream()` after one item (an
    async generator closed early): 2.62 raises GeneratorExit out of `aclose()` with no GraphMind at
    all (its usage-attribution context var is reset in another Context; docs/pydantic-ai.md,
    "Differences by release"); 2.68 closes cleanly. Releases between were not run."""
    version = tuple(int(x) for x in importlib.metadata.version("pydantic-ai-slim").split(".")[:2])
    return version >= (2, 68)


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_model(case: str, kit_hub: Callable[[], KitHub] | None) -> None:
    if case == "stream_cut_short_async" and not _reader_closes_early_bare():
        pytest.skip("this Pydantic AI raises closing a run_stream reader early, bare (docs/pydantic-ai.md)")
    await run_case(case, ModelSubject(), hub=kit_hub)


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_tool(case: str, kit_hub: Callable[[], KitHub] | None) -> None:
    await run_case(case, ToolSubject(), hub=kit_hub)
