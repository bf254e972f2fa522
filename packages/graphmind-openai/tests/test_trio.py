"""`AsyncOpenAI` instrumented and attached under trio (the SDK supports trio through anyio): a plain
call, a stream, and a before gate held on the trio loop and answered with an inject."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import trio
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI

MESSAGES = [{"role": "user", "content": "Plan a day in Cairo"}]
REPLY = "Visit the pyramids."


@pytest.fixture
def setup() -> Iterator[tuple[FakeHub, graphmind.Client, FakeOpenAI]]:
    with FakeHub(pause_on_error="off") as hub, FakeOpenAI(chunks=4, default_reply=REPLY) as fake:
        client = graphmind.Client(app="trio", url=hub.url, retry_interval=0.2)
        assert client.ready(5)
        try:
            yield hub, client, fake
        finally:
            client.dispose()


def _openai(fake: FakeOpenAI, gm: graphmind.Client) -> AsyncOpenAI:
    return instrument_openai(AsyncOpenAI(base_url=fake.base_url, api_key="k", max_retries=0), session=gm)


def _finished(hub: FakeHub) -> dict[str, Any]:
    return hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "llm:step")


def test_a_plain_call_under_trio(setup: tuple[FakeHub, graphmind.Client, FakeOpenAI]) -> None:
    hub, gm, fake = setup

    async def main() -> Any:
        async with _openai(fake, gm) as client:
            return await client.chat.completions.create(model="gpt-test", messages=MESSAGES)  # type: ignore[arg-type]

    result = trio.run(main)
    assert isinstance(result, ChatCompletion) and result.choices[0].message.content == REPLY
    assert _finished(hub)["output"]["content"] == REPLY


def test_a_stream_under_trio(setup: tuple[FakeHub, graphmind.Client, FakeOpenAI]) -> None:
    hub, gm, fake = setup

    async def main() -> list[Any]:
        async with _openai(fake, gm) as client:
            stream = await client.chat.completions.create(model="gpt-test", messages=MESSAGES, stream=True)  # type: ignore[arg-type]
            return [chunk async for chunk in stream]

    chunks = trio.run(main)
    assert chunks and all(isinstance(c, ChatCompletionChunk) for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == REPLY
    end = _finished(hub)
    assert end["output"]["content"] == REPLY and not end.get("cutShort")


def test_a_held_before_gate_under_trio_awaits_without_blocking_the_loop_and_takes_an_inject(
    setup: tuple[FakeHub, graphmind.Client, FakeOpenAI],
) -> None:
    hub, gm, fake = setup
    hub.set_debug(breakpoints=[("llm:step", "before")])

    async def main() -> Any:
        ticks = 0
        result: list[Any] = []

        async def call() -> None:
            async with _openai(fake, gm) as client:
                result.append(await client.chat.completions.create(model="gpt-test", messages=MESSAGES))  # type: ignore[arg-type]

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)
            while not hub.of_type("exec.paused"):  # the loop keeps running while the call is held
                ticks += 1
                await trio.sleep(0.002)
            held_at = ticks
            for _ in range(5):
                ticks += 1
                await trio.sleep(0)
            assert ticks > held_at and not result
            hub.resolve(hub.of_type("exec.paused")[0]["gateId"], "inject", "from the debugger")
        return result[0]

    result = trio.run(main)
    assert isinstance(result, ChatCompletion) and result.choices[0].message.content == "from the debugger"
    assert fake.request_count == 0
    assert _finished(hub)["injected"] is True
