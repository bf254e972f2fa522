"""The gates of an `llm:step` node, against an in-process hub (FakeHub) and the loopback provider."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from openai_shapes import MESSAGES, MODEL, SHAPES, TEXT, TOOL_CALL
from providers import FakeProvider

import graphmind
from graphmind import RunAborted
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI


@pytest.fixture
async def provider(fake: FakeOpenAI) -> AsyncIterator[FakeProvider]:
    p = FakeProvider(fake)
    yield p
    await p.aclose()


def _client(provider: FakeProvider, gm: graphmind.Client, is_async: bool = False, **options: Any) -> Any:
    return instrument_openai(provider.client(is_async, **options), session=gm)


def _ends(hub: FakeHub) -> list[dict[str, Any]]:
    return [
        e for e in hub.events if e["type"] in ("node.finished", "node.error") and e["nodeId"] == "llm:step"
    ]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", list(SHAPES))
async def test_before_inject_skips_the_provider_request(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub, name: str, is_async: bool
) -> None:
    shape, reply, _ = SHAPES[name]
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", reply)
    # What the app gets from the bare SDK for the same reply, to compare types and content.
    provider.script([reply])
    bare_type, _bare_value = await shape(provider.client(is_async))
    provider.fake.requests.clear()

    got_type, got_value = await shape(_client(provider, gm, is_async))

    assert provider.request_count == 0
    assert got_type is bare_type
    text = json.dumps(got_value, default=str)
    if reply == TOOL_CALL:
        assert "search_flights" in text and "CAI" in text
    elif reply == TEXT:
        assert TEXT.split()[0] in text and "Museum" in text
    fakehub.wait_for(lambda: bool(_ends(fakehub)), what="node end")
    end = _ends(fakehub)[0]
    assert end["type"] == "node.finished" and end["injected"] is True


def test_a_string_inject_becomes_an_assistant_reply(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", "from the debugger")
    result = _client(provider, gm).chat.completions.create(model=MODEL, messages=MESSAGES)
    assert isinstance(result, openai.types.chat.ChatCompletion)
    assert result.choices[0].message.content == "from the debugger"
    assert result.choices[0].finish_reason == "stop"
    assert result.model == MODEL
    assert provider.request_count == 0


def test_an_injected_value_of_the_wrong_shape_holds_the_gate_again(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    answers = iter([("inject", 42), ("inject", {"choices": "nope"}), ("continue", None)])
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer(lambda frame: next(answers))
    provider.script([TEXT])
    result = _client(provider, gm).chat.completions.create(model=MODEL, messages=MESSAGES)
    assert result.choices[0].message.content == TEXT
    assert len(fakehub.of_type("exec.paused")) == 3
    assert provider.request_count == 1


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", list(SHAPES))
async def test_after_inject_replaces_the_reply_and_a_stream_replays_a_coherent_event_sequence(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub, name: str, is_async: bool
) -> None:
    shape, reply, _ = SHAPES[name]
    replacement = TOOL_CALL if reply == TEXT else TEXT
    if reply not in (TEXT, TOOL_CALL):  # a parse shape: inject JSON its schema accepts
        replacement = '{"city": "Giza", "days": 3}'
    fakehub.set_debug(breakpoints=[("llm:step", "after")])
    fakehub.auto_answer("inject", replacement)
    provider.script([reply])
    got_type, got_value = await shape(_client(provider, gm, is_async))
    provider.script([replacement])
    bare_type, _bare_value = await shape(provider.client(is_async))
    assert got_type is bare_type
    text = json.dumps(got_value, default=str)
    if replacement == TEXT:
        assert "Museum" in text
    elif replacement == TOOL_CALL:
        assert "search_flights" in text
    else:
        assert "Giza" in text
    assert provider.request_count == 2  # one real call (replaced after it ran), one bare
    paused = fakehub.of_type("exec.paused")[0]
    assert paused["gate"] == "after"
    assert paused["output"]["tool_calls" if reply == TOOL_CALL else "content"]


@pytest.mark.parametrize("name", list(SHAPES))
async def test_after_continue_gives_the_app_the_same_result_and_a_held_stream_the_same_stream(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub, name: str
) -> None:
    shape, reply, _ = SHAPES[name]
    fakehub.set_debug(breakpoints=[("llm:step", "after")])
    fakehub.auto_answer("continue")
    provider.script([reply, reply])
    got = await shape(_client(provider, gm))
    bare = await shape(provider.client(False))
    assert got == bare
    assert provider.request_count == 2
    end = fakehub.wait_event(lambda e: e["type"] == "node.finished")
    assert "injected" not in end


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_error_gate_retry_resends_after_a_429(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub, is_async: bool
) -> None:
    fakehub.set_debug(pause_on_error="on")
    fakehub.auto_answer("retry")
    provider.script([FakeOpenAI.error(429), TEXT])
    shape = SHAPES["chat.create"][0]
    _, value = await shape(_client(provider, gm, is_async))
    assert value["choices"][0]["message"]["content"] == TEXT
    assert provider.request_count == 2
    paused = fakehub.of_type("exec.paused")
    assert [p["gate"] for p in paused] == ["error"]
    assert paused[0]["error"]["name"] == "RateLimitError"
    fakehub.wait_for(lambda: bool(_ends(fakehub)), what="node end")
    assert len(fakehub.of_type("node.started")) == 1 and _ends(fakehub)[-1]["type"] == "node.finished"


def test_error_gate_continue_reraises_the_sdks_own_exception(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    fakehub.set_debug(pause_on_error="on")
    fakehub.auto_answer("continue")
    provider.script([FakeOpenAI.error(429)])
    with pytest.raises(openai.RateLimitError) as raised:
        _client(provider, gm).chat.completions.create(model=MODEL, messages=MESSAGES)
    assert raised.value.status_code == 429
    error = fakehub.wait_event(lambda e: e["type"] == "node.error")
    assert error["error"]["name"] == "RateLimitError"


@pytest.mark.parametrize("name", ["chat.create", "chat.create(stream)", "responses.stream"])
async def test_error_gate_inject_returns_the_value(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub, name: str
) -> None:
    fakehub.set_debug(pause_on_error="on")
    fakehub.auto_answer("inject", TEXT)
    provider.script([FakeOpenAI.error(500)])
    _, value = await SHAPES[name][0](_client(provider, gm))
    assert "Museum" in json.dumps(value)
    assert provider.request_count == 1
    end = fakehub.wait_event(lambda e: e["type"] == "node.finished")
    assert end["injected"] is True


def test_error_gate_holds_on_a_timeout(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    provider.fake.chunk_delay = 0.0
    fakehub.set_debug(pause_on_error="on")
    fakehub.auto_answer("inject", "after a timeout")
    client = _client(provider, gm)
    # Nothing listens on port 9 of loopback: the connection fails at once, like a timeout would.
    broken = client.with_options(base_url="http://127.0.0.1:9/v1", timeout=0.5)
    result = broken.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert result.choices[0].message.content == "after a timeout"
    assert fakehub.of_type("exec.paused")[0]["error"]["name"] in ("APIConnectionError", "APITimeoutError")


def test_the_sdks_own_retries_stay_inside_one_node(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    provider.script([FakeOpenAI.error(429), FakeOpenAI.error(503), TEXT])
    result = _client(provider, gm, max_retries=2).chat.completions.create(model=MODEL, messages=MESSAGES)
    assert result.choices[0].message.content == TEXT
    assert provider.request_count == 3
    fakehub.wait_for(lambda: bool(_ends(fakehub)), what="node end")
    assert len(fakehub.of_type("node.started")) == 1
    assert fakehub.of_type("exec.paused") == []  # the SDK recovered before the error gate


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_abort_at_the_before_gate_raises_run_aborted_without_a_request(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub, is_async: bool
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("abort")
    with pytest.raises(RunAborted):
        await SHAPES["chat.create(stream)"][0](_client(provider, gm, is_async))
    assert provider.request_count == 0
    error = fakehub.wait_event(lambda e: e["type"] == "node.error")
    assert error["error"]["name"] == "RunAborted"


def test_a_pause_during_a_stream_holds_its_after_gate(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    # Deciding to buffer the stream (wants_hold) must not use up the pause the after gate needs.
    import threading

    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    provider.script([TEXT])
    client = _client(provider, gm)
    out: list[Any] = []
    worker = threading.Thread(
        target=lambda: out.append(
            list(client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True))
        )
    )
    worker.start()
    before = fakehub.next_paused()
    fakehub.pause()
    fakehub.resolve(before["gateId"], "continue")
    after = fakehub.next_paused(after=1)
    assert (after["gate"], after["reason"]) == ("after", "pause")
    assert after["output"]["content"] == TEXT
    fakehub.resolve(after["gateId"], "continue")
    worker.join(10)
    assert "".join(c.choices[0].delta.content or "" for c in out[0] if c.choices) == TEXT


def test_the_breakpoints_option_holds_a_model_step_from_code(fakehub: FakeHub, fake: FakeOpenAI) -> None:
    """`breakpoints=["llm:step"]` on the session: every model call holds before the request, while the
    hub's own debug state stays empty."""
    gm = graphmind.Client(app="openai-code-holds", url=fakehub.url, breakpoints=["llm:step"])
    try:
        held: list[dict[str, Any]] = []
        fakehub.auto_answer(lambda frame: held.append(frame) or ("inject", "from the debugger"))
        client = instrument_openai(
            openai.OpenAI(base_url=fake.base_url, api_key="test", max_retries=0), session=gm
        )
        reply = client.chat.completions.create(model=MODEL, messages=MESSAGES)
        assert reply.choices[0].message.content == "from the debugger"
        assert fake.request_count == 0
        assert [(p["nodeId"], p["gate"], p["reason"], p.get("source")) for p in held] == [
            ("llm:step", "before", "breakpoint", "code")
        ]
    finally:
        gm.dispose()


TEXT_AND_CALL = {
    "content": "Let me look that up.",
    "tool_calls": [{"id": "call_t1", "name": "search_flights", "arguments": {"to": "CAI"}}],
}


@pytest.mark.parametrize(
    ("api", "stream"), [("chat", False), ("chat", True), ("responses", False), ("responses", True)]
)
def test_an_injected_reply_with_text_and_tool_calls_keeps_both(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub, api: str, stream: bool
) -> None:
    """Every other tool-call inject test sends `content: None`: the text that comes with the calls
    must reach the app too (the message's content, the stream's text deltas, `output_text`)."""
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", TEXT_AND_CALL)
    client = _client(provider, gm)
    if api == "chat":
        made = client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=stream)
        if stream:
            chunks = [c for c in made if c.choices]
            text = "".join(c.choices[0].delta.content or "" for c in chunks)
            names = [
                d.function.name for c in chunks for d in c.choices[0].delta.tool_calls or [] if d.function
            ]
        else:
            message = made.choices[0].message
            text, names = message.content, [c.function.name for c in message.tool_calls or []]
    else:
        made = client.responses.create(model=MODEL, input="trip", stream=stream)
        reply = next(e.response for e in made if e.type == "response.completed") if stream else made
        text, names = reply.output_text, [i.name for i in reply.output if i.type == "function_call"]
    assert provider.request_count == 0
    assert text == "Let me look that up." and [n for n in names if n] == ["search_flights"]
