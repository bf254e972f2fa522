"""`GraphmindLogger` alone (`litellm.callbacks = [GraphmindLogger()]`), and with `instrument_litellm()`."""

from __future__ import annotations

import threading
from typing import Any

import litellm
import pytest
from litellm import ModelResponse
from litellm_helpers import MODE_IDS, MODES, aends, complete, drain, text_of

import graphmind
from graphmind import RunAborted
from graphmind.testing import FakeHub
from graphmind_litellm import GraphmindLogger
from graphmind_openai.testing import FakeOpenAI


@pytest.fixture
def logger(gm: graphmind.Client) -> GraphmindLogger:
    handler = GraphmindLogger(session=gm)
    litellm.callbacks = [handler]
    return handler


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_every_call_is_an_llm_step_with_reply_usage_and_cost(
    logger: GraphmindLogger,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fake.script(["Day one: the Egyptian Museum."])
    result = await complete(is_async, **kw, stream=stream)
    if stream:
        assert text_of(await drain(is_async, result)) == "Day one: the Egyptian Museum."
    end = (await aends(fakehub))[0]
    assert end["type"] == "node.finished"
    assert end["output"]["content"] == "Day one: the Egyptian Museum."
    assert end["usage"]["costUsd"] > 0
    started = next(e for e in fakehub.events if e["type"] == "node.started")
    assert started["attrs"]["hook"] == "GraphmindLogger" and started["attrs"]["provider"] == "openai"
    assert started["input"]["messages"][1]["content"] == "Plan a day in Cairo"
    assert not logger._calls  # nothing left behind


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_an_error_is_recorded_with_litellms_exception_type(
    logger: GraphmindLogger, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any], is_async: bool
) -> None:
    fake.script([FakeOpenAI.error(429)])
    with pytest.raises(litellm.RateLimitError):
        await complete(is_async, **kw)
    end = (await aends(fakehub))[0]
    assert end["type"] == "node.error" and end["error"]["name"] == "RateLimitError"


def test_the_sync_before_gate_holds_the_call(
    logger: GraphmindLogger, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    out: dict[str, Any] = {}
    t = threading.Thread(target=lambda: out.setdefault("r", litellm.completion(**kw)))
    t.start()
    paused = fakehub.next_paused()
    assert paused["gate"] == "before" and paused["actions"] == ["continue", "abort"]
    assert fake.request_count == 0  # held before the HTTP request
    fakehub.resolve(paused["gateId"], "continue")
    t.join(30)
    assert isinstance(out["r"], ModelResponse) and fake.request_count == 1


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_async_before_inject_answers_with_no_request(
    logger: GraphmindLogger, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any], stream: bool
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer(
        "inject",
        {"content": None, "tool_calls": [{"id": "call_x", "name": "search_flights", "args": {"to": "CAI"}}]},
    )
    result = await litellm.acompletion(**kw, stream=stream)
    if stream:
        chunks = await drain(True, result)
        calls = [c for chunk in chunks if chunk.choices for c in chunk.choices[0].delta.tool_calls or []]
        assert calls[0].function.name == "search_flights"
    else:
        assert result.choices[0].message.tool_calls[0].id == "call_x"
    assert fake.request_count == 0
    end = (await aends(fakehub))[0]
    assert end["injected"] is True and end["output"]["tool_calls"][0]["name"] == "search_flights"
    assert len(fakehub.of_type("node.finished")) == 1


async def test_async_abort_stops_the_call_with_no_request(
    logger: GraphmindLogger, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("abort")
    with pytest.raises(RunAborted):
        await litellm.acompletion(**kw)
    assert fake.request_count == 0
    assert not logger._calls  # nothing left behind


async def test_async_after_inject_replaces_the_reply(
    logger: GraphmindLogger, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    fake.script(["the provider's reply"])
    fakehub.set_debug(breakpoints=[("llm:step", "after")])
    fakehub.auto_answer("inject", "replaced")
    result = await litellm.acompletion(**kw)
    assert result.choices[0].message.content == "replaced"
    assert fake.request_count == 1
    assert (await aends(fakehub))[0]["output"]["content"] == "replaced"


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_with_instrument_litellm_one_call_is_one_node(
    logger: GraphmindLogger,
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fake.script(["only once"])
    result = await complete(is_async, **kw, stream=stream)
    if stream:
        await drain(is_async, result)
    end = (await aends(fakehub))[0]
    started = [e for e in fakehub.events if e["type"] == "node.started"]
    assert len(started) == 1 and started[0]["attrs"]["hook"] in ("completion", "acompletion")
    assert end["output"]["content"] == "only once"
    assert not logger._calls
