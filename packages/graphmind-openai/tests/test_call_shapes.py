"""Every covered call shape, sync and async, against the loopback fake (default transport) and
respx (legacy httpx client): the app gets the same type and, field for field, the same value with
and without instrumentation, and each call is one finished `llm:step` node."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from openai_shapes import SHAPES, TEXT, TOOL_CALL
from providers import provider_of

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI


@pytest.fixture(params=["fake", "respx"])
def provider(request: pytest.FixtureRequest, fake: FakeOpenAI) -> Iterator[Any]:
    with provider_of(request.param, fake) as p:
        yield p


async def _close(client: Any) -> None:
    result = client.close()
    if hasattr(result, "__await__"):
        await result


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", list(SHAPES))
async def test_each_shape_returns_exactly_what_the_bare_sdk_returns(
    provider: Any, gm: graphmind.Client, fakehub: FakeHub, name: str, is_async: bool
) -> None:
    shape, reply, streams = SHAPES[name]
    bare = provider.client(is_async)
    instrumented = instrument_openai(provider.client(is_async), session=gm)
    try:
        provider.script([reply])
        bare_type, bare_value = await shape(bare)
        provider.script([reply])
        got_type, got_value = await shape(instrumented)
    finally:
        await _close(bare)
        await _close(instrumented)

    assert got_type is bare_type
    assert got_value == bare_value
    assert provider.request_count == 2

    end = fakehub.wait_event(
        lambda e: e["type"] in ("node.finished", "node.error") and e["nodeId"] == "llm:step"
    )
    assert end["type"] == "node.finished", end
    assert "cutShort" not in end
    output = end["output"]
    if reply == TOOL_CALL:
        assert output["tool_calls"][0]["name"] == "search_flights"
        assert json.loads(output["tool_calls"][0]["arguments"]) == {"to": "CAI"}
    elif reply == TEXT:
        assert output["content"] == TEXT
    started = fakehub.wait_event(lambda e: e["type"] == "node.started" and e["nodeId"] == "llm:step")
    assert started["kind"] == "llm" and started["attrs"]["model"] == "gpt-test"
    assert started["input"]["messages"], started["input"]
    if streams:
        fakehub.wait_for(lambda: bool(fakehub.of_type("node.token")), what="node.token")
        deltas = [d for e in fakehub.of_type("node.token") for d in e["deltas"]]
        if reply == TOOL_CALL:
            args = "".join(d["v"] for d in deltas if d["t"] == "tool-args")
            assert json.loads(args) == {"to": "CAI"}
            assert {d["toolName"] for d in deltas if d["t"] == "tool-args"} == {"search_flights"}
        else:
            assert "".join(d["v"] for d in deltas if d["t"] == "text") == TEXT
        assert end["streaming"] is True and end["chunks"] > 1
    elif name.startswith("chat.create") or name.startswith("responses.create"):
        assert end["usage"]["totalTokens"] > 0
