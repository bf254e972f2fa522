"""The shared gate matrix (graphmind.testing.gate_matrix) on `chat.completions.create`, sync and
async, against the loopback provider (graphmind_openai.testing.FakeOpenAI).

Every case runs twice (the `kit_hub` fixture, graphmind_server.testing.pytest_plugin): against core's
in-process FakeHub, and against the real hub process (one `graphmind serve` for the module) driven as
the viewer drives it (`graphmind_server.testing.KitHub`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
import trio
from openai import AsyncOpenAI, OpenAI
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_openai import instrument_openai, uninstrument_openai
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess, KitHub
from graphmind_server.testing.foreign_trace import FOREIGN_CASES, run_foreign_case

MESSAGES = [{"role": "user", "content": "Plan a day in Cairo"}]
REPLY = "Visit the pyramids."


@dataclass
class Clients:
    """One framework object for the kit: a sync and an async client on the same provider."""

    sync: OpenAI
    async_: AsyncOpenAI


class OpenAISubject(GateSubject):
    node_id = "llm:step"
    # The one model-reply shape (docs/protocol.md): a tool call with object arguments and no id.
    error_type = openai.BadRequestError
    streams = True

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake
        self.injected = {
            "content": None,
            "tool_calls": [{"name": "search_flights", "arguments": {"to": "CAI"}}],
        }
        self.made: list[Clients] = []

    @property
    def real_calls(self) -> int:
        return self.fake.request_count

    def make(self) -> Clients:
        url = self.fake.base_url
        clients = Clients(
            OpenAI(base_url=url, api_key="k", max_retries=0),
            AsyncOpenAI(base_url=url, api_key="k", max_retries=0),
        )
        self.made.append(clients)
        return clients

    def instrument(self, thing: Clients, session: graphmind.Client) -> Clients:
        sync, async_ = (
            instrument_openai(thing.sync, session=session),
            instrument_openai(thing.async_, session=session),
        )
        return thing if (sync is thing.sync and async_ is thing.async_) else Clients(sync, async_)

    def undo(self, thing: Clients) -> Clients:
        uninstrument_openai(thing.sync)
        uninstrument_openai(thing.async_)
        return thing

    def call(self, thing: Clients) -> Any:
        return thing.sync.chat.completions.create(model="gpt-test", messages=MESSAGES)  # type: ignore[arg-type]

    async def acall(self, thing: Clients) -> Any:
        return await thing.async_.chat.completions.create(model="gpt-test", messages=MESSAGES)  # type: ignore[arg-type]

    def stream(self, thing: Clients) -> Any:
        return thing.sync.chat.completions.create(model="gpt-test", messages=MESSAGES, stream=True)  # type: ignore[arg-type]

    async def astream(self, thing: Clients) -> Any:
        return await thing.async_.chat.completions.create(model="gpt-test", messages=MESSAGES, stream=True)  # type: ignore[arg-type]

    def fail_next(self) -> None:
        self.fake.script([FakeOpenAI.error(400, "bad request (fake)")])

    def check_real(self, result: Any) -> None:
        assert isinstance(result, ChatCompletion)
        assert result.choices[0].message.content == REPLY

    def check_injected(self, result: Any, value: Any) -> None:
        assert isinstance(result, ChatCompletion)
        message = result.choices[0].message
        assert message.content is None and message.tool_calls
        call = message.tool_calls[0]
        assert call.function.name == "search_flights"  # type: ignore[union-attr]
        assert json.loads(call.function.arguments) == {"to": "CAI"}  # type: ignore[union-attr]
        assert call.id.startswith("call_")

    def check_stream(self, items: list[Any]) -> None:
        assert items and all(isinstance(i, ChatCompletionChunk) for i in items)
        assert "".join(c.choices[0].delta.content or "" for c in items if c.choices) == REPLY

    def edit(self, original: Any) -> Any:
        assert original["messages"] == MESSAGES and original["model"] == "gpt-test"
        return {
            "model": "gpt-edited",
            "messages": [{"role": "user", "content": "Plan a day in Luxor"}],
            "temperature": 0.25,
        }

    def check_edited(self, result: Any, edited: Any) -> None:
        self.check_real(result)  # the SDK's own type, the provider's reply
        body = self.fake.requests[-1].body
        assert body == edited, body  # the provider received exactly the edited body

    async def close(self) -> None:
        for clients in self.made:
            clients.sync.close()
            await clients.async_.close()


@pytest.fixture
async def subject() -> AsyncIterator[OpenAISubject]:
    with FakeOpenAI(chunks=4, default_reply=REPLY) as fake:
        s = OpenAISubject(fake)
        yield s
        await s.close()


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix(case: str, subject: OpenAISubject, kit_hub: Callable[[], KitHub] | None) -> None:
    await run_case(case, subject, hub=kit_hub)


@pytest.mark.parametrize("case", CASES)
def test_gate_matrix_under_trio(case: str) -> None:
    with FakeOpenAI(chunks=4, default_reply=REPLY) as fake:
        subject = OpenAISubject(fake)

        async def main() -> None:
            try:
                await run_case(case, subject)
            finally:
                await subject.close()

        trio.run(main)


@pytest.mark.parametrize("case", FOREIGN_CASES)
async def test_a_trace_openinference_recorded_replays_through_the_adapter(
    case: str, subject: OpenAISubject, hub_process: HubProcess, tmp_path: Path
) -> None:
    """The kit's foreign-trace case (docs/adapters.md): OpenInference's OpenAI instrumentor."""
    from openinference.instrumentation.openai import OpenAIInstrumentor

    await run_foreign_case(case, subject, OpenAIInstrumentor(), hub_process, tmp_path)
