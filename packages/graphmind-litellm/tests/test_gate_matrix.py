"""The shared gate matrix (graphmind.testing.gate_matrix) on `litellm.completion` / `acompletion`,
plain and streamed, against the loopback provider speaking the OpenAI wire format.

Every case runs twice (the `kit_hub` fixture, graphmind_server.testing.pytest_plugin): against core's
in-process FakeHub, and against the real hub process (one `graphmind serve` for the module) driven as
the viewer drives it (`graphmind_server.testing.KitHub`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import litellm
import pytest
from litellm import ModelResponse
from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper
from litellm.types.utils import ModelResponseStream

import graphmind
from graphmind.adapter import enabled_for
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_litellm import instrument_litellm, uninstrument_litellm
from graphmind_litellm._apis import APIS
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess, KitHub
from graphmind_server.testing.foreign_trace import FOREIGN_CASES, run_foreign_case

MESSAGES = [{"role": "user", "content": "Plan a day in Cairo"}]
REPLY = "Visit the pyramids."


class LiteLLMSubject(GateSubject):
    """`litellm.completion(...)` / `await litellm.acompletion(...)`: the app gets a `ModelResponse`."""

    node_id = "llm:step"
    error_type = litellm.BadRequestError
    streams = True

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake
        # The one model-reply shape: a tool call with object arguments and no id.
        self.injected = {
            "content": None,
            "tool_calls": [{"name": "search_flights", "arguments": {"to": "CAI"}}],
        }
        self.kw = {
            "model": "openai/gpt-4o-mini",
            "messages": MESSAGES,
            "api_base": fake.base_url,
            "api_key": "k",
            "num_retries": 0,
            "max_retries": 0,
        }

    @property
    def real_calls(self) -> int:
        return self.fake.request_count

    def make(self) -> ModuleType:
        return litellm  # LiteLLM's functions are module-level: the "thing" is the module

    def instrument(self, thing: ModuleType, session: graphmind.Client | None) -> ModuleType:
        originals = {api.attr: getattr(thing, api.attr) for api in APIS}
        patched = instrument_litellm(session=session)
        # None: the default session, which the kit only passes under GRAPHMIND_DISABLED=1.
        if not enabled_for(session):  # a disabled client, or the default session under GRAPHMIND_DISABLED=1
            assert patched is False and all(getattr(thing, a) is f for a, f in originals.items())
        return thing

    def undo(self, thing: ModuleType) -> ModuleType:
        uninstrument_litellm()
        return thing

    def call(self, thing: ModuleType) -> Any:
        return thing.completion(**self.kw)

    async def acall(self, thing: ModuleType) -> Any:
        return await thing.acompletion(**self.kw)

    def stream(self, thing: ModuleType) -> Any:
        return thing.completion(**self.kw, stream=True)

    async def astream(self, thing: ModuleType) -> Any:
        return await thing.acompletion(**self.kw, stream=True)

    def fail_next(self) -> None:
        self.fake.script([FakeOpenAI.error(400, "bad request (fake)")])

    def check_real(self, result: Any) -> None:
        assert isinstance(result, ModelResponse)
        assert result.choices[0].message.content == REPLY

    def check_injected(self, result: Any, value: Any) -> None:
        assert isinstance(result, ModelResponse)
        message = result.choices[0].message
        assert message.content is None and message.tool_calls
        call = message.tool_calls[0]
        assert call.function.name == "search_flights"
        assert json.loads(call.function.arguments) == {"to": "CAI"}
        assert call.id.startswith("call_")

    def check_stream(self, items: list[Any]) -> None:
        assert items and all(isinstance(i, ModelResponseStream) for i in items)
        assert "".join(c.choices[0].delta.content or "" for c in items if c.choices) == REPLY

    def edit(self, original: Any) -> Any:
        assert original["messages"] == MESSAGES and original["model"] == "openai/gpt-4o-mini"
        return {
            "model": "openai/gpt-edited",
            "messages": [{"role": "user", "content": "Plan a day in Luxor"}],
            "temperature": 0.25,
        }

    def check_edited(self, result: Any, edited: Any) -> None:
        self.check_real(result)  # LiteLLM's own type, the provider's reply
        body = self.fake.requests[-1].body  # what the provider received: the edited call
        assert body["model"] == "gpt-edited" and body["messages"] == edited["messages"], body
        assert body["temperature"] == 0.25


class LiteLLMStreamedSubject(LiteLLMSubject):
    """The same matrix on streamed calls: the app reads `completion(..., stream=True)` to its end and
    gets LiteLLM's chunks (an inject arrives as LiteLLM's own stream of the injected reply)."""

    streams = False  # the stream cases already run in LiteLLMSubject

    def call(self, thing: ModuleType) -> Any:
        stream = thing.completion(**self.kw, stream=True)
        assert isinstance(stream, CustomStreamWrapper)
        return list(stream)

    async def acall(self, thing: ModuleType) -> Any:
        stream = await thing.acompletion(**self.kw, stream=True)
        assert isinstance(stream, CustomStreamWrapper)
        return [chunk async for chunk in stream]

    def check_real(self, result: Any) -> None:
        assert all(isinstance(c, ModelResponseStream) for c in result)
        assert "".join(c.choices[0].delta.content or "" for c in result if c.choices) == REPLY

    def check_injected(self, result: Any, value: Any) -> None:
        assert all(isinstance(c, ModelResponseStream) for c in result)
        calls = [t for c in result if c.choices for t in c.choices[0].delta.tool_calls or []]
        assert calls[0].function.name == "search_flights" and calls[0].id.startswith("call_")
        assert json.loads("".join(t.function.arguments or "" for t in calls)) == {"to": "CAI"}


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    with FakeOpenAI(chunks=4, default_reply=REPLY) as provider:
        yield provider
    uninstrument_litellm()  # the kit's client is gone: the next case instruments afresh


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_completion(
    case: str, fake: FakeOpenAI, kit_hub: Callable[[], KitHub] | None
) -> None:
    await run_case(case, LiteLLMSubject(fake), hub=kit_hub)


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_streamed_completion(
    case: str, fake: FakeOpenAI, kit_hub: Callable[[], KitHub] | None
) -> None:
    await run_case(case, LiteLLMStreamedSubject(fake), hub=kit_hub)


@pytest.mark.parametrize("case", FOREIGN_CASES)
async def test_a_trace_openinference_recorded_replays_through_the_adapter(
    case: str, fake: FakeOpenAI, hub_process: HubProcess, tmp_path: Path
) -> None:
    """The kit's foreign-trace case (docs/adapters.md): OpenInference's LiteLLM instrumentor."""
    from openinference.instrumentation.litellm import LiteLLMInstrumentor

    await run_foreign_case(case, LiteLLMSubject(fake), LiteLLMInstrumentor(), hub_process, tmp_path)
