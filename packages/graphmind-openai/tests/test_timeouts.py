"""Timeouts over a hold (issue 16 item 10; docs/timeouts.md): the SDK's request timeout starts after
the before gate, so a hold longer than the timeout does not fail the request it held."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator

import pytest
from openai_shapes import MESSAGES, MODEL, TEXT
from providers import FakeProvider

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI

TIMEOUT = 0.3  # seconds: the SDK's request timeout
HOLD = 1.0  # the person takes longer than that at the before gate


@pytest.fixture
async def provider(fake: FakeOpenAI) -> AsyncIterator[FakeProvider]:
    p = FakeProvider(fake)
    yield p
    await p.aclose()


def _answer_after_a_long_hold(hub: FakeHub, held_for: list[float]) -> threading.Thread:
    def answer() -> None:
        paused = hub.next_paused(timeout=10)
        started = time.monotonic()
        time.sleep(HOLD)  # the hold itself is what is tested: it must outlast the request timeout
        held_for.append(time.monotonic() - started)
        hub.resolve(paused["gateId"], "continue")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_a_hold_longer_than_the_request_timeout_does_not_time_the_request_out(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub, is_async: bool
) -> None:
    provider.script([TEXT])
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    client = instrument_openai(provider.client(is_async, timeout=TIMEOUT, max_retries=0), session=gm)
    held_for: list[float] = []
    answerer = _answer_after_a_long_hold(fakehub, held_for)
    if is_async:
        result = await client.chat.completions.create(model=MODEL, messages=MESSAGES)
    else:
        result = client.chat.completions.create(model=MODEL, messages=MESSAGES)
    answerer.join(10)
    assert held_for and held_for[0] >= HOLD > TIMEOUT
    assert result.choices[0].message.content == TEXT
    assert provider.request_count == 1
    assert fakehub.of_type("node.error") == []
