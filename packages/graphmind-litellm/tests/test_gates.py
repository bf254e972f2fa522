"""Every gate of `instrument_litellm()` in the four call modes (completion / acompletion, streamed or
not), against an in-process hub (FakeHub) and the loopback provider: real LiteLLM types on top."""

from __future__ import annotations

import json
from typing import Any

import litellm
import pytest
from litellm import ModelResponse
from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper
from litellm_helpers import MODE_IDS, MODES, TOOLS, complete, drain, ends, text_of

import graphmind
from graphmind import RunAborted
from graphmind.testing import FakeHub
from graphmind_openai.testing import FakeOpenAI

TOOL_REPLY = {
    "content": None,
    "tool_calls": [{"id": "call_x", "name": "search_flights", "arguments": {"to": "CAI"}}],
}


async def _text(is_async: bool, stream: bool, result: Any) -> str:
    if stream:
        assert isinstance(result, CustomStreamWrapper)
        return text_of(await drain(is_async, result))
    assert isinstance(result, ModelResponse)
    return str(result.choices[0].message.content)


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_before_inject_skips_the_provider_request(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", "from the debugger")
    result = await complete(is_async, **kw, stream=stream)
    assert await _text(is_async, stream, result) == "from the debugger"
    assert fake.request_count == 0
    end = ends(fakehub)[0]
    assert end["type"] == "node.finished" and end["injected"] is True
    assert end["output"]["content"] == "from the debugger"


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_an_injected_tool_call_becomes_the_models_tool_call(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", TOOL_REPLY)
    result = await complete(is_async, **kw, tools=TOOLS, stream=stream)
    if stream:
        chunks = await drain(is_async, result)
        calls = [c for chunk in chunks if chunk.choices for c in chunk.choices[0].delta.tool_calls or []]
        assert calls[0].id == "call_x" and calls[0].function.name == "search_flights"
        assert json.loads("".join(c.function.arguments or "" for c in calls)) == {"to": "CAI"}
    else:
        call = result.choices[0].message.tool_calls[0]
        assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
            "call_x",
            "search_flights",
            {"to": "CAI"},
        )
        assert result.choices[0].finish_reason == "tool_calls"
    assert fake.request_count == 0
    assert ends(fakehub)[0]["output"]["tool_calls"][0]["name"] == "search_flights"


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_after_inject_replaces_the_reply(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fake.script(["the provider's reply"])
    seen: list[dict[str, Any]] = []

    def answer(frame: dict[str, Any]) -> tuple[str, Any]:
        seen.append(frame)
        return ("inject", "replaced at the after gate")

    fakehub.set_debug(breakpoints=[("llm:step", "after")])
    fakehub.auto_answer(answer)
    result = await complete(is_async, **kw, stream=stream)
    assert await _text(is_async, stream, result) == "replaced at the after gate"
    assert fake.request_count == 1
    assert seen[0]["output"]["content"] == "the provider's reply"  # the after gate saw the whole reply


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_after_continue_on_a_held_stream_gives_the_app_the_same_reply(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fake.script(["the provider's reply"])
    fakehub.set_debug(breakpoints=[("llm:step", "after")])
    fakehub.auto_answer("continue")
    result = await complete(is_async, **kw, stream=stream)
    assert await _text(is_async, stream, result) == "the provider's reply"
    assert fake.request_count == 1
    assert ends(fakehub)[0]["output"]["content"] == "the provider's reply"


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_after_retry_calls_the_provider_again(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fake.script(["first", "second"])
    answers = iter([("retry", None), ("continue", None)])
    fakehub.set_debug(breakpoints=[("llm:step", "after")])
    fakehub.auto_answer(lambda frame: next(answers))
    result = await complete(is_async, **kw, stream=stream)
    assert await _text(is_async, stream, result) == "second"
    assert fake.request_count == 2


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_error_gate_retry_after_a_429_succeeds(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fake.script([FakeOpenAI.error(429), "after the retry"])
    paused: list[dict[str, Any]] = []

    def answer(frame: dict[str, Any]) -> tuple[str, Any]:
        paused.append(frame)
        return ("retry", None)

    fakehub.set_debug(pause_on_error="on")
    fakehub.auto_answer(answer)
    result = await complete(is_async, **kw, stream=stream)
    assert await _text(is_async, stream, result) == "after the retry"
    assert fake.request_count == 2
    assert paused[0]["gate"] == "error" and paused[0]["error"]["name"] == "RateLimitError"
    end = ends(fakehub)[0]
    assert end["type"] == "node.finished"


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_error_gate_continue_raises_litellms_own_exception(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fake.script([FakeOpenAI.error(429)])
    fakehub.set_debug(pause_on_error="on")
    fakehub.auto_answer("continue")
    with pytest.raises(litellm.RateLimitError):
        await complete(is_async, **kw, stream=stream)
    end = ends(fakehub)[0]
    assert end["type"] == "node.error" and end["error"]["name"] == "RateLimitError"


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_error_gate_inject_answers_for_the_provider(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fake.script([FakeOpenAI.error(500)])
    fakehub.set_debug(pause_on_error="on")
    fakehub.auto_answer("inject", "a stand-in reply")
    result = await complete(is_async, **kw, stream=stream)
    assert await _text(is_async, stream, result) == "a stand-in reply"


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_abort_raises_run_aborted_without_a_request(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("abort")
    with pytest.raises(RunAborted):
        await complete(is_async, **kw, stream=stream)
    assert fake.request_count == 0


async def test_an_injected_value_of_the_wrong_shape_holds_the_gate_again(
    instrumented: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    answers = iter([("inject", 42), ("inject", {"tool_calls": [{"arguments": {}}]}), ("continue", None)])
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer(lambda frame: next(answers))
    fake.script(["real"])
    result = litellm.completion(**kw)
    assert result.choices[0].message.content == "real"
    assert len(fakehub.of_type("exec.paused")) == 3


async def test_the_full_model_response_body_is_taken_as_is(
    instrumented: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    body = {
        "id": "chatcmpl-x",
        "model": "gpt-test",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "whole body"}}
        ],
    }
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", body)
    result = litellm.completion(**kw)
    assert isinstance(result, ModelResponse)
    assert (result.id, result.choices[0].message.content) == ("chatcmpl-x", "whole body")
    assert fake.request_count == 0
