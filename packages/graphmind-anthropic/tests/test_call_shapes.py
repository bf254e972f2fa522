"""Every covered call shape, instrumented, gives the app exactly what the bare SDK gives it, and
records one node with the reply and its usage."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic_shapes import SHAPES, TEXT, TOOL_USE, close, new_client

import graphmind
from graphmind.testing import FakeHub
from graphmind_anthropic import instrument_anthropic
from graphmind_anthropic.testing import FakeAnthropic


def _ends(hub: FakeHub) -> list[dict[str, Any]]:
    return [
        e for e in hub.events if e["type"] in ("node.finished", "node.error") and e["nodeId"] == "llm:step"
    ]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", list(SHAPES))
async def test_each_shape_returns_what_the_bare_sdk_returns_and_records_the_reply(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub, name: str, is_async: bool
) -> None:
    shape, reply = SHAPES[name]
    bare = new_client(fake, is_async)
    fake.script([reply])
    bare_type, bare_value = await shape(bare)
    client = instrument_anthropic(new_client(fake, is_async), session=gm)
    fake.script([reply])
    got_type, got_value = await shape(client)
    await close(bare)
    await close(client)
    assert got_type is bare_type
    assert got_value == bare_value
    fakehub.wait_for(lambda: bool(_ends(fakehub)), what="node end")
    end = _ends(fakehub)[0]
    assert end["type"] == "node.finished"
    assert "cutShort" not in end
    if reply == TEXT:
        assert end["output"]["content"] == TEXT
    else:
        assert end["output"]["tool_calls"] == [
            {"id": "toolu_1", "name": "search_flights", "arguments": {"to": "CAI"}}
        ]
        assert end["output"]["stop_reason"] == "tool_use"
    assert end["usage"]["outputTokens"] > 0
    assert end["usage"]["cacheReadTokens"] == 0
    started = next(e for e in fakehub.events if e["type"] == "node.started" and e["nodeId"] == "llm:step")
    assert started["input"]["messages"] == [{"role": "user", "content": "Plan a day in Cairo"}]
    assert started["input"]["system"] == "You plan trips."
    assert started["attrs"]["api"] == ("beta.messages" if name.startswith("beta") else "messages")
    assert reply in (TEXT, TOOL_USE)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_streams_send_their_deltas_as_tokens(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub, is_async: bool
) -> None:
    shape, _ = SHAPES["create_stream_tool_use"]
    client = instrument_anthropic(new_client(fake, is_async), session=gm)
    fake.script(
        [
            {
                "content": "Looking.",
                "tool_calls": [{"id": "toolu_9", "name": "search_flights", "arguments": {"to": "CAI"}}],
            }
        ]
    )
    await shape(client)
    await close(client)
    fakehub.wait_for(lambda: bool(_ends(fakehub)), what="node end")
    fakehub.wait_for(lambda: bool(fakehub.of_type("node.token")), what="node.token")
    deltas = [d for e in fakehub.of_type("node.token") for d in e["deltas"]]
    assert "".join(d["v"] for d in deltas if d["t"] == "text") == "Looking."
    args = [d for d in deltas if d["t"] == "tool-args"]
    assert "".join(d["v"] for d in args) == '{"to":"CAI"}'
    assert args[0]["toolCallId"] == "toolu_9" and args[0]["toolName"] == "search_flights"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_count_tokens_is_recorded_and_never_held(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub, is_async: bool
) -> None:
    fakehub.set_debug(breakpoints=[("llm:count_tokens", "before"), ("llm:step", "before")], mode="step")
    client = instrument_anthropic(new_client(fake, is_async), session=gm)
    result = client.messages.count_tokens(
        model="claude-test", messages=[{"role": "user", "content": "one two three"}]
    )
    if is_async:
        result = await result
    await close(client)
    assert result.input_tokens > 0
    end = fakehub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "llm:count_tokens")
    assert end["output"] == {"input_tokens": result.input_tokens}
    assert fakehub.of_type("exec.paused") == []
