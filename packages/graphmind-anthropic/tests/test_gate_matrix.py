"""The shared gate matrix (graphmind.testing.gate_matrix) on the three Messages call shapes, sync
and async: `messages.create`, `messages.create(stream=True)` and the `messages.stream()` helper,
against the loopback provider (graphmind_anthropic.testing.FakeAnthropic).

Every case runs twice (the `kit_hub` fixture, graphmind_server.testing.pytest_plugin): against core's
in-process FakeHub, and against the real hub process (one `graphmind serve` for the module) driven as
the viewer drives it (`graphmind_server.testing.KitHub`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic import Anthropic, AsyncAnthropic
from anthropic.types import Message, RawMessageStreamEvent

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_anthropic import instrument_anthropic, uninstrument_anthropic
from graphmind_anthropic.testing import FakeAnthropic
from graphmind_server.testing import HubProcess, KitHub
from graphmind_server.testing.foreign_trace import FOREIGN_CASES, run_foreign_case

KW: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 256,
    "messages": [{"role": "user", "content": "Plan a day in Cairo"}],
}
REPLY = "Visit the pyramids."


@dataclass
class Clients:
    """One framework object for the kit: a sync and an async client on the same provider."""

    sync: Anthropic
    async_: AsyncAnthropic


def _events_text(events: list[Any]) -> str:
    return "".join(
        e.delta.text for e in events if e.type == "content_block_delta" and e.delta.type == "text_delta"
    )


class CreateSubject(GateSubject):
    """`messages.create`; its streams are `create(stream=True)`."""

    node_id = "llm:step"
    error_type = anthropic.BadRequestError
    streams = True

    def __init__(self, fake: FakeAnthropic) -> None:
        self.fake = fake
        # The one model-reply shape (docs/protocol.md): a tool call with object arguments and no id.
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
            Anthropic(base_url=url, api_key="k", max_retries=0),
            AsyncAnthropic(base_url=url, api_key="k", max_retries=0),
        )
        self.made.append(clients)
        return clients

    def instrument(self, thing: Clients, session: graphmind.Client) -> Clients:
        sync, async_ = (
            instrument_anthropic(thing.sync, session=session),
            instrument_anthropic(thing.async_, session=session),
        )
        return thing if (sync is thing.sync and async_ is thing.async_) else Clients(sync, async_)

    def undo(self, thing: Clients) -> Clients:
        uninstrument_anthropic(thing.sync)
        uninstrument_anthropic(thing.async_)
        return thing

    def call(self, thing: Clients) -> Any:
        return thing.sync.messages.create(**KW)

    async def acall(self, thing: Clients) -> Any:
        return await thing.async_.messages.create(**KW)

    def stream(self, thing: Clients) -> Any:
        return thing.sync.messages.create(**KW, stream=True)

    async def astream(self, thing: Clients) -> Any:
        return await thing.async_.messages.create(**KW, stream=True)

    def fail_next(self) -> None:
        self.fake.script([FakeAnthropic.error(400, "bad request (fake)")])

    def message(self, result: Any) -> Message:
        return result

    def check_real(self, result: Any) -> None:
        message = self.message(result)
        assert isinstance(message, Message)
        assert message.content[0].type == "text" and message.content[0].text == REPLY

    def check_injected(self, result: Any, value: Any) -> None:
        message = self.message(result)
        assert isinstance(message, Message) and message.stop_reason == "tool_use"
        (use,) = message.content
        assert use.type == "tool_use" and use.name == "search_flights" and use.input == {"to": "CAI"}
        assert use.id

    def check_stream(self, items: list[Any]) -> None:
        assert items and all(isinstance(i, RawMessageStreamEvent.__args__) for i in items)  # type: ignore[attr-defined]
        assert _events_text(items) == REPLY

    def edit(self, original: Any) -> Any:
        assert original["messages"] == KW["messages"] and original["model"] == "claude-test"
        return {
            "model": "claude-edited",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Plan a day in Luxor"}],
            "system": "Be brief.",
        }

    def check_edited(self, result: Any, edited: Any) -> None:
        self.check_real(result)  # the SDK's own type, the provider's reply
        body = dict(self.fake.requests[-1].body)
        body.pop("stream", None)  # a streamed call stays streamed
        assert body == edited, body  # the provider received exactly the edited body

    async def close(self) -> None:
        for clients in self.made:
            clients.sync.close()
            await clients.async_.close()


class CreateStreamSubject(CreateSubject):
    """`messages.create(stream=True)` read to the end: the app gets the events."""

    def call(self, thing: Clients) -> Any:
        return list(thing.sync.messages.create(**KW, stream=True))

    async def acall(self, thing: Clients) -> Any:
        return [e async for e in await thing.async_.messages.create(**KW, stream=True)]

    def message(self, result: Any) -> Message:
        """The events folded into the Message they describe (what `get_final_message()` does)."""
        assert all(isinstance(e, RawMessageStreamEvent.__args__) for e in result)  # type: ignore[attr-defined]
        body: dict[str, Any] = {}
        blocks: dict[int, dict[str, Any]] = {}
        partial: dict[int, str] = {}
        for event in result:
            if event.type == "message_start":
                body = event.message.model_dump(mode="json")
            elif event.type == "content_block_start":
                blocks[event.index] = event.content_block.model_dump(mode="json")
            elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                blocks[event.index]["text"] += event.delta.text
            elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                partial[event.index] = partial.get(event.index, "") + event.delta.partial_json
            elif event.type == "message_delta":
                body["stop_reason"] = event.delta.stop_reason
        for index, text in partial.items():
            blocks[index]["input"] = json.loads(text or "{}")
        body["content"] = [blocks[i] for i in sorted(blocks)]
        return Message.model_validate(body)


class StreamHelperSubject(CreateSubject):
    """`messages.stream()`: a call is `get_final_message()`; a stream is the helper's `text_stream`."""

    def call(self, thing: Clients) -> Any:
        with thing.sync.messages.stream(**KW) as stream:
            return stream.get_final_message()

    async def acall(self, thing: Clients) -> Any:
        async with thing.async_.messages.stream(**KW) as stream:
            return await stream.get_final_message()

    def stream(self, thing: Clients) -> Iterator[str]:
        with thing.sync.messages.stream(**KW) as stream:
            yield from stream.text_stream

    async def astream(self, thing: Clients) -> AsyncIterator[str]:
        async with thing.async_.messages.stream(**KW) as stream:
            async for text in stream.text_stream:
                yield text

    def check_stream(self, items: list[Any]) -> None:
        assert all(isinstance(i, str) for i in items) and "".join(items) == REPLY


SUBJECTS = {
    "create": CreateSubject,
    "create_stream": CreateStreamSubject,
    "stream_helper": StreamHelperSubject,
}


@pytest.fixture(params=list(SUBJECTS))
async def subject(request: pytest.FixtureRequest) -> AsyncIterator[CreateSubject]:
    with FakeAnthropic(chunks=4, default_reply=REPLY) as fake:
        s = SUBJECTS[request.param](fake)
        yield s
        await s.close()


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix(case: str, subject: CreateSubject, kit_hub: Callable[[], KitHub] | None) -> None:
    await run_case(case, subject, hub=kit_hub)


@pytest.mark.parametrize("case", FOREIGN_CASES)
async def test_a_trace_openinference_recorded_replays_through_the_adapter(
    case: str, hub_process: HubProcess, tmp_path: Path
) -> None:
    """The kit's foreign-trace case (docs/adapters.md): OpenInference's Anthropic instrumentor."""
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    with FakeAnthropic(chunks=4, default_reply=REPLY) as fake:
        subject = CreateSubject(fake)
        await run_foreign_case(case, subject, AnthropicInstrumentor(), hub_process, tmp_path)
        await subject.close()
