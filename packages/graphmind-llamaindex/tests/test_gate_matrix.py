"""The shared gate matrix (graphmind.testing.gate_matrix) on LlamaIndex's own objects: an LLM gated
with `gate_llm` (chat, achat, stream_chat, astream_chat of the scripted FunctionCallingLLM), with and
without the root-dispatcher handler installed, and a `FunctionTool` gated with `gate_tools`.

Every case runs twice (the `kit_hub` fixture, graphmind_server.testing.pytest_plugin): against core's
in-process FakeHub, and against the real hub process (one `graphmind serve` for the module) driven as
the viewer drives it (`graphmind_server.testing.KitHub`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from llama_index.core.tools import FunctionTool, ToolOutput

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_llamaindex import (
    gate_llm,
    gate_tools,
    instrument_llamaindex,
    ungate_llm,
    ungate_tools,
    uninstrument_llamaindex,
)
from graphmind_llamaindex.testing import ScriptedFunctionCallingLLM
from graphmind_server.testing import HubProcess, KitHub
from graphmind_server.testing.foreign_trace import FOREIGN_CASES, run_foreign_case

REPLY = "real reply"
HI = [ChatMessage(role="user", content="hi")]


class ProviderError(Exception):
    pass


class LlmSubject(GateSubject):
    node_id = "llm:step"
    error_type = ProviderError
    streams = True

    def __init__(self, observe: bool) -> None:
        self.observe = observe
        self.made: list[ScriptedFunctionCallingLLM] = []
        # The one model-reply shape (docs/protocol.md), without an id: the adapter makes one.
        self.injected = {"content": "", "tool_calls": [{"name": "search", "arguments": {"query": "cats"}}]}

    @property
    def real_calls(self) -> int:
        return sum(len(llm.calls) for llm in self.made)

    def make(self) -> ScriptedFunctionCallingLLM:
        llm = ScriptedFunctionCallingLLM(default=REPLY, chunk_size=4)
        self.made.append(llm)
        return llm

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        if self.observe:
            instrument_llamaindex(session)
        return gate_llm(thing, session=session)

    def undo(self, thing: Any) -> Any:
        uninstrument_llamaindex()
        return ungate_llm(thing)

    def call(self, thing: Any) -> Any:
        return thing.chat(HI)

    async def acall(self, thing: Any) -> Any:
        return await thing.achat(HI)

    def stream(self, thing: Any) -> Iterator[Any]:
        return thing.stream_chat(HI)  # type: ignore[no-any-return]

    def astream(self, thing: Any) -> Any:
        return thing.astream_chat(HI)  # a coroutine that returns the async generator, as in LlamaIndex

    def fail_next(self) -> None:
        self.raised = ProviderError("the provider said no")
        self.made[-1].add(self.raised)

    def check_real(self, result: Any) -> None:
        assert isinstance(result, ChatResponse) and result.message.content == REPLY

    def check_injected(self, result: Any, value: Any) -> None:
        assert isinstance(result, ChatResponse)
        calls = self.made[-1].get_tool_calls_from_response(result)
        assert [(c.tool_name, c.tool_kwargs) for c in calls] == [("search", {"query": "cats"})]
        assert calls[0].tool_id.startswith("call_")

    def check_stream(self, items: list[Any]) -> None:
        assert len(items) > 1 and all(isinstance(i, ChatResponse) for i in items)
        assert "".join(i.delta for i in items) == REPLY and items[-1].message.content == REPLY

    def edit(self, original: Any) -> Any:
        assert original == {"messages": [{"role": "user", "content": "hi"}]}
        return {
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "edited"}]
        }

    def check_edited(self, result: Any, edited: Any) -> None:
        self.check_real(result)
        seen = self.made[-1].calls[-1]  # what the LLM received: LlamaIndex's own ChatMessages
        assert all(isinstance(m, ChatMessage) for m in seen)
        assert [(str(m.role.value), m.content) for m in seen] == [("system", "Be brief."), ("user", "edited")]


class ToolSubject(GateSubject):
    node_id = "tool:search"
    error_type = ProviderError
    injected = "from the debugger"
    refused_edit: ClassVar[dict[str, str]] = {"colour": "red"}  # an argument the tool does not take

    def __init__(self) -> None:
        self.calls = 0
        self.queries: list[str] = []
        self.fail: ProviderError | None = None

    @property
    def real_calls(self) -> int:
        return self.calls

    def make(self) -> FunctionTool:
        def search(query: str) -> str:
            """Search the web."""
            self.calls += 1
            self.queries.append(query)
            if self.fail is not None:
                error, self.fail = self.fail, None
                raise error
            return f"results for {query}"

        return FunctionTool.from_defaults(search)

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        return gate_tools(thing, session=session)

    def undo(self, thing: Any) -> Any:
        return ungate_tools(thing)

    def call(self, thing: Any) -> Any:
        return thing.call(query="cats")

    async def acall(self, thing: Any) -> Any:
        return await thing.acall(query="cats")

    def fail_next(self) -> None:
        self.raised = self.fail = ProviderError("the search backend said no")

    def check_real(self, result: Any) -> None:
        assert isinstance(result, ToolOutput) and result.content == "results for cats" and not result.is_error

    def check_injected(self, result: Any, value: Any) -> None:
        assert isinstance(result, ToolOutput) and result.content == value and result.tool_name == "search"

    def edit(self, original: Any) -> Any:
        assert original == {"query": "cats"}
        return {"query": "dogs"}

    def check_edited(self, result: Any, edited: Any) -> None:
        assert isinstance(result, ToolOutput) and result.content == "results for dogs"
        assert self.queries[-1] == "dogs"


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_llm(case: str, kit_hub: Callable[[], KitHub] | None) -> None:
    await run_case(case, LlmSubject(observe=False), hub=kit_hub)


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_llm_with_the_handler_installed(
    case: str, kit_hub: Callable[[], KitHub] | None
) -> None:
    try:
        await run_case(case, LlmSubject(observe=True), hub=kit_hub)
    finally:
        uninstrument_llamaindex()


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_tool(case: str, kit_hub: Callable[[], KitHub] | None) -> None:
    await run_case(case, ToolSubject(), hub=kit_hub)


@pytest.mark.parametrize("case", FOREIGN_CASES)
async def test_a_trace_openinference_recorded_replays_through_the_adapter(
    case: str, hub_process: HubProcess, tmp_path: Path
) -> None:
    """The kit's foreign-trace case (docs/adapters.md): OpenInference's LlamaIndex instrumentor."""
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    await run_foreign_case(case, LlmSubject(observe=False), LlamaIndexInstrumentor(), hub_process, tmp_path)
