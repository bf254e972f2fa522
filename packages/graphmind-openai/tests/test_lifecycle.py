"""instrument / uninstrument, derived clients, stream endings, token batches, step identity, hints."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from typing import Any

import pytest
from openai import OpenAI
from openai_shapes import MESSAGES, MODEL, TEXT, TOOL_CALL, TOOLS
from providers import FakeProvider

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai, uninstrument_openai
from graphmind_openai.testing import FakeOpenAI


@pytest.fixture
async def provider(fake: FakeOpenAI) -> AsyncIterator[FakeProvider]:
    p = FakeProvider(fake)
    yield p
    await p.aclose()


def _steps(hub: FakeHub) -> list[dict[str, Any]]:
    return [e for e in hub.events if e["type"] == "node.started" and e["nodeId"] == "llm:step"]


def _call(client: Any) -> Any:
    return client.chat.completions.create(model=MODEL, messages=MESSAGES)


def _settle(gm: graphmind.Client, hub: FakeHub) -> None:
    """Every event emitted so far has reached the hub (a run marker, then wait for it)."""
    with gm.span("marker", kind="custom"):
        pass
    hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "custom:marker")


def test_instrumenting_twice_is_harmless(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = provider.client(False)
    assert instrument_openai(client, session=gm) is client
    assert instrument_openai(client, session=gm) is client
    _call(client)
    _settle(gm, fakehub)
    assert len(_steps(fakehub)) == 1


def test_uninstrument_restores_the_client(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = provider.client(False)
    before = {k: v for k, v in vars(client.chat.completions).items()}
    instrument_openai(client, session=gm)
    assert uninstrument_openai(client) is client
    assert vars(client.chat.completions) == before
    assert (
        "_send_request" not in vars(client)
        and "copy" not in vars(client)
        and "with_options" not in vars(client)
    )
    _call(client)
    _settle(gm, fakehub)
    assert _steps(fakehub) == []
    assert uninstrument_openai(client) is client  # a second undo is harmless


def test_another_client_is_untouched(provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub) -> None:
    instrument_openai(provider.client(False), session=gm)
    other = provider.client(False)
    assert "_post" not in vars(other.chat.completions) or vars(other.chat.completions)["_post"] == other.post
    _call(other)
    _settle(gm, fakehub)
    assert _steps(fakehub) == []


def test_clients_derived_with_with_options_and_copy_are_instrumented(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = instrument_openai(provider.client(False), session=gm)
    _call(client.with_options(timeout=5))
    _call(client.copy(max_retries=1))
    _call(client.with_options(timeout=5).with_options(max_retries=0))
    _settle(gm, fakehub)
    assert len(_steps(fakehub)) == 3


def test_a_disabled_session_leaves_the_client_as_it_was(provider: FakeProvider) -> None:
    off = graphmind.Client(app="off", enabled=False)
    client = provider.client(False)
    instrument_openai(client, session=off)
    assert "_send_request" not in vars(client)
    assert _call(client).choices[0].message.content == "ok"


def test_instrumenting_something_else_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match=r"instrument_openai\(\) takes an openai\.OpenAI"):
        instrument_openai(object())


def test_a_subclass_such_as_azure_is_instrumented(
    fake: FakeOpenAI, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    from openai import AzureOpenAI

    client = AzureOpenAI(
        api_key="k", api_version="2024-10-21", azure_endpoint=fake.base_url.removesuffix("/v1"), max_retries=0
    )
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", "from azure")
    result = instrument_openai(client, session=gm).chat.completions.create(model="deploy", messages=MESSAGES)
    assert result.choices[0].message.content == "from azure"
    assert fake.request_count == 0


# ---- stream endings -------------------------------------------------------------------------------------


def _end(hub: FakeHub) -> dict[str, Any]:
    return hub.wait_event(
        lambda e: e["type"] in ("node.finished", "node.error") and e["nodeId"] == "llm:step"
    )


def test_a_stream_closed_early_finishes_its_node_cut_short(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    provider.fake.chunks = 30
    provider.script([TEXT])
    client = instrument_openai(provider.client(False), session=gm)
    stream = client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
    for i, _chunk in enumerate(stream):
        if i == 3:
            break
    stream.close()
    end = _end(fakehub)
    assert end["type"] == "node.finished" and end["cutShort"] is True
    assert 0 < len(end["output"]["content"]) < len(TEXT)


def test_a_stream_helper_left_early_finishes_cut_short(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    provider.fake.chunks = 30
    provider.script([TEXT])
    client = instrument_openai(provider.client(False), session=gm)
    with client.responses.stream(model=MODEL, input="hi") as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                break
    assert _end(fakehub)["cutShort"] is True


def test_an_abandoned_stream_finishes_cut_short(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = instrument_openai(provider.client(False), session=gm)
    stream = client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
    del stream  # never read
    gc.collect()
    end = _end(fakehub)
    assert end["type"] == "node.finished" and end["cutShort"] is True


def test_an_abandoned_half_read_stream_finishes_cut_short(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    provider.fake.chunks = 30
    provider.script([TEXT])
    client = instrument_openai(provider.client(False), session=gm)
    stream = client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
    next(iter(stream))
    next(iter(stream))
    del stream
    gc.collect()
    assert _end(fakehub)["cutShort"] is True


async def test_an_async_stream_closed_early_finishes_cut_short(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    provider.fake.chunks = 30
    provider.script([TEXT])
    client = instrument_openai(provider.client(True), session=gm)
    stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
    async for _chunk in stream:
        break
    await stream.close()
    assert _end(fakehub)["cutShort"] is True


async def test_an_async_stream_whose_task_is_cancelled_mid_read_finishes_cut_short(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    # The task is cancelled inside the SDK's __anext__ (CancelledError is not an Exception): the
    # node still ends, cut short, instead of staying open in the hub.
    import asyncio

    provider.fake.chunks = 30
    provider.fake.chunk_delay = 0.05
    provider.script([TEXT])
    client = instrument_openai(provider.client(True), session=gm)
    stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)

    async def read_all() -> None:
        async for _chunk in stream:
            pass

    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(read_all(), 0.12)
    await stream.close()
    assert _end(fakehub)["cutShort"] is True


def test_a_stream_read_to_the_end_is_not_cut_short(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = instrument_openai(provider.client(False), session=gm)
    with client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True) as stream:
        list(stream)
    end = _end(fakehub)
    assert "cutShort" not in end and end["output"]["content"] == "ok"


# ---- tokens ------------------------------------------------------------------------------------------------


def test_stream_deltas_arrive_as_batched_node_tokens(provider: FakeProvider, fakehub: FakeHub) -> None:
    gm = graphmind.Client(app="batch", url=fakehub.url, token_flush_interval=10.0)
    assert gm.ready(5)
    try:
        provider.fake.chunks = 20
        provider.script([TOOL_CALL])
        client = instrument_openai(provider.client(False), session=gm)
        list(client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=TOOLS, stream=True))
        _end(fakehub)
        tokens = fakehub.of_type("node.token")
        assert len(tokens) == 1  # 20 argument deltas, one batch (flushed at the end)
        [delta] = tokens[0]["deltas"]
        assert (
            delta["t"] == "tool-args"
            and delta["toolName"] == "search_flights"
            and delta["toolCallId"] == "call_1"
        )
        assert delta["v"] == TOOL_CALL["tool_calls"][0]["arguments"]
    finally:
        gm.dispose()


def test_tokens_flush_about_every_34_ms_while_a_stream_is_slow(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    provider.fake.chunks = 12
    provider.fake.chunk_delay = 0.01
    provider.script([TEXT])
    client = instrument_openai(provider.client(False), session=gm)
    list(client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True))
    _end(fakehub)
    tokens = fakehub.of_type("node.token")
    assert 2 <= len(tokens) < 12
    assert "".join(d["v"] for t in tokens for d in t["deltas"]) == TEXT


# ---- identity ----------------------------------------------------------------------------------------------


def test_steps_of_one_invocation_share_an_id_and_the_tool_roster_is_hinted_once(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = instrument_openai(provider.client(False), session=gm)
    provider.script([TOOL_CALL, TEXT])
    with gm.run("trip"):
        first = client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        grown = [
            *MESSAGES,
            first.choices[0].message,
            {"role": "tool", "tool_call_id": call.id, "content": "CAI 09:40"},
        ]
        client.chat.completions.create(model=MODEL, messages=grown, tools=TOOLS)
    _settle(gm, fakehub)
    steps = _steps(fakehub)
    assert [s["instanceId"].rsplit(":", 1)[1] for s in steps] == ["s1", "s2"]
    assert steps[0]["instanceId"].split(":")[0] == steps[1]["instanceId"].split(":")[0]
    hints = fakehub.of_type("graph.hint")
    assert len(hints) == 1
    assert hints[0]["nodes"] == [{"nodeId": "tool:search_flights", "kind": "tool", "name": "search_flights"}]
    second_input = steps[1]["input"]["messages"]
    assert second_input[2]["tool_calls"][0]["name"] == "search_flights"  # an SDK message object, trimmed
    assert second_input[3] == {"role": "tool", "content": "CAI 09:40", "tool_call_id": call.id}


def test_a_new_conversation_starts_a_new_invocation(
    provider: FakeProvider, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client: OpenAI = instrument_openai(provider.client(False), session=gm)
    _call(client)
    client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "something else"}])
    _settle(gm, fakehub)
    steps = _steps(fakehub)
    assert [s["instanceId"].endswith(":s1") for s in steps] == [True, True]
    assert steps[0]["instanceId"] != steps[1]["instanceId"]


def test_a_stream_whose_body_is_already_in_memory_is_recorded(gm: graphmind.Client, fakehub: FakeHub) -> None:
    # httpx2.MockTransport hands over `content=` bytes: the response never reads `.stream`.
    httpx2 = pytest.importorskip("httpx2")
    from graphmind_openai._inject import chat_body, chat_sse

    sse = chat_sse(chat_body(TEXT, MODEL), pieces=5)
    transport = httpx2.MockTransport(
        lambda r: httpx2.Response(200, content=sse, headers={"content-type": "text/event-stream"})
    )
    client = instrument_openai(
        OpenAI(
            api_key="k", base_url="http://mock.invalid/v1", http_client=httpx2.Client(transport=transport)
        ),
        session=gm,
    )
    chunks = list(client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == TEXT
    end = _end(fakehub)
    assert end["output"]["content"] == TEXT and "cutShort" not in end


def test_a_failure_to_describe_the_reply_never_becomes_the_calls_error(
    provider: FakeProvider,
    gm: graphmind.Client,
    fakehub: FakeHub,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from graphmind.adapter.stainless._call import Call

    def broken(self: Any, result: Any, response: Any) -> Any:
        raise ValueError("a reply shape GraphMind cannot read")

    monkeypatch.setattr(Call, "described", broken)
    caplog.set_level("WARNING", logger="graphmind")
    provider.script([TEXT])
    client = instrument_openai(provider.client(False), session=gm)
    reply = _call(client)
    assert reply.choices[0].message.content  # the app gets the real reply
    assert _end(fakehub)["type"] == "node.finished"
    assert "could not describe a reply of llm:step" in caplog.text


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_failure_to_describe_the_request_runs_the_call_unrecorded_never_broken(
    provider: FakeProvider,
    gm: graphmind.Client,
    fakehub: FakeHub,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    is_async: bool,
) -> None:
    """Describing reads the app's messages (another thread may be changing them): a failure there is
    warned about and the call goes to the provider as if GraphMind were not there."""
    from graphmind.adapter.stainless._call import Call

    def broken(self: Any) -> Any:
        raise RuntimeError("dictionary changed size during iteration")

    monkeypatch.setattr(Call, "spec", broken)
    caplog.set_level("WARNING", logger="graphmind")
    provider.script([TEXT])
    client = instrument_openai(provider.client(is_async), session=gm)
    reply = await _call(client) if is_async else _call(client)
    assert reply.choices[0].message.content == TEXT  # the app gets the real reply
    _settle(gm, fakehub)
    assert _steps(fakehub) == []  # no half-recorded node
    assert "could not describe a request of llm:step, so the call runs unrecorded" in caplog.text
