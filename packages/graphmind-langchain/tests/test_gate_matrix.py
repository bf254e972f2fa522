"""The shared gate matrix (graphmind.testing.gate_matrix) on a chat model gated with `gate_model`:
invoke, ainvoke, stream and astream of a counting fake model.

Every case runs twice (the `kit_hub` fixture, graphmind_server.testing.pytest_plugin): against core's
in-process FakeHub, and against the real hub process (one `graphmind serve` for the module) driven as
the viewer drives it (`graphmind_server.testing.KitHub`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_langchain import gate_model, ungate_model
from graphmind_server.testing import HubProcess, KitHub
from graphmind_server.testing.foreign_trace import FOREIGN_CASES, run_foreign_case

REPLY = "real reply"
WORDS = ["real", " ", "reply"]


class ProviderError(Exception):
    pass


class Provider:
    """What the fake model calls: counts attempts, fails once on request."""

    def __init__(self) -> None:
        self.calls = 0
        self.fail: ProviderError | None = None
        self.seen: list[list[BaseMessage]] = []  # the messages of each attempt

    def attempt(self, messages: list[BaseMessage]) -> None:
        self.calls += 1
        self.seen.append(list(messages))
        if self.fail is not None:
            error, self.fail = self.fail, None
            raise error


class CountingChatModel(BaseChatModel):
    provider: Any

    @property
    def _llm_type(self) -> str:
        return "counting-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.provider.attempt(messages)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(REPLY))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        self.provider.attempt(messages)
        for word in WORDS:
            yield ChatGenerationChunk(message=AIMessageChunk(content=word))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        self.provider.attempt(messages)
        for word in WORDS:
            yield ChatGenerationChunk(message=AIMessageChunk(content=word))


class LangChainSubject(GateSubject):
    node_id = "llm:step"
    # The one model-reply shape (docs/protocol.md), with LangChain's own word `args` and no id.
    error_type = ProviderError
    streams = True

    def __init__(self) -> None:
        self.provider = Provider()
        self.injected = {"content": "", "tool_calls": [{"name": "search", "args": {"query": "cats"}}]}

    @property
    def real_calls(self) -> int:
        return self.provider.calls

    def make(self) -> CountingChatModel:
        return CountingChatModel(provider=self.provider)

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        return gate_model(thing, session=session)

    def undo(self, thing: Any) -> Any:
        return ungate_model(thing)

    def call(self, thing: Any) -> Any:
        return thing.invoke("hi")

    async def acall(self, thing: Any) -> Any:
        return await thing.ainvoke("hi")

    def stream(self, thing: Any) -> Iterator[Any]:
        return thing.stream("hi")  # type: ignore[no-any-return]

    def astream(self, thing: Any) -> AsyncIterator[Any]:
        return thing.astream("hi")  # type: ignore[no-any-return]

    def fail_next(self) -> None:
        self.raised = self.provider.fail = ProviderError("the provider said no")

    def check_real(self, result: Any) -> None:
        assert isinstance(result, AIMessage) and result.content == REPLY

    def check_injected(self, result: Any, value: Any) -> None:
        assert isinstance(result, AIMessage)
        assert [(c["name"], c["args"]) for c in result.tool_calls] == [("search", {"query": "cats"})]
        assert result.tool_calls[0]["id"].startswith("call_")

    def check_stream(self, items: list[Any]) -> None:
        assert all(isinstance(i, AIMessageChunk) for i in items)
        assert "".join(str(i.content) for i in items) == REPLY

    def edit(self, original: Any) -> Any:
        assert original == {"messages": [{"role": "human", "content": "hi"}]}
        return {
            "messages": [
                {"role": "system", "content": "Answer in French."},
                {"role": "human", "content": "edited"},
            ]
        }

    def check_edited(self, result: Any, edited: Any) -> None:
        self.check_real(result)
        seen = self.provider.seen[-1]  # what the model received: LangChain's own message types
        assert [(m.type, m.content) for m in seen] == [("system", "Answer in French."), ("human", "edited")]


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix(case: str, kit_hub: Callable[[], KitHub] | None) -> None:
    await run_case(case, LangChainSubject(), hub=kit_hub)


@pytest.mark.parametrize("case", FOREIGN_CASES)
async def test_a_trace_openinference_recorded_replays_through_the_adapter(
    case: str, hub_process: HubProcess, tmp_path: Path
) -> None:
    """The kit's foreign-trace case (docs/adapters.md): OpenInference's LangChain instrumentor."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    await run_foreign_case(case, LangChainSubject(), LangChainInstrumentor(), hub_process, tmp_path)
