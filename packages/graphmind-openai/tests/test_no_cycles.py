"""A detached `chat.completions.create` leaves no reference cycle: the node's execution, its spec,
the request and the reply are freed when the call returns, not by the next
garbage collection. The stainless node's edit hook holds the execution; core drops the hook when
the node ends (`NodeSpec.edit`). With the circle, the openai `plain` cell paid ~20k instructions a
call in collections (bench/cell_counts.py). A stream's node lives as long as the SDK's `Stream`,
whose own generator holds it in a cycle of the SDK's making: not tested here."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from openai import AsyncOpenAI, OpenAI
from openai_shapes import MESSAGES, MODEL

import graphmind
from graphmind._node.record import NodeRecord
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI


@pytest.fixture
def detached() -> Iterator[graphmind.Client]:
    client = graphmind.Client(app="cycles", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    yield client
    client.dispose()


def _no_cycles(call: object, monkeypatch: pytest.MonkeyPatch) -> None:
    assert callable(call)
    call()  # warm: the first call starts the transport
    # Each node execution made in the window, by weak reference: scanning gc.get_objects() instead
    # cost 10-20 s in a suite worker that has every framework imported.
    made: list[weakref.ref[NodeRecord]] = []
    init = NodeRecord.__init__

    def recording_init(self: NodeRecord, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(weakref.ref(self))

    monkeypatch.setattr(NodeRecord, "__init__", recording_init)
    enabled = gc.isenabled()
    gc.disable()  # cyclic garbage stays alive until the collection below
    try:
        for _ in range(3):
            call()
        left = sum(ref() is not None for ref in made)  # still alive: only a cycle keeps them
    finally:
        if enabled:
            gc.enable()
    assert len(made) == 3, f"{len(made)} node executions for 3 calls"
    assert left == 0, f"{left} of 3 node executions outlived their calls"


def test_a_detached_call_frees_its_node_when_it_returns(
    fake: FakeOpenAI, detached: graphmind.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = instrument_openai(OpenAI(api_key="k", base_url=fake.base_url, max_retries=0), session=detached)
    _no_cycles(lambda: client.chat.completions.create(model=MODEL, messages=MESSAGES), monkeypatch)


def test_a_detached_async_call_frees_its_node_when_it_returns(
    fake: FakeOpenAI, detached: graphmind.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    client = instrument_openai(
        AsyncOpenAI(api_key="k", base_url=fake.base_url, max_retries=0), session=detached
    )
    loop = asyncio.new_event_loop()
    try:
        _no_cycles(
            lambda: loop.run_until_complete(client.chat.completions.create(model=MODEL, messages=MESSAGES)),
            monkeypatch,
        )
    finally:
        loop.run_until_complete(client.close())
        loop.close()
