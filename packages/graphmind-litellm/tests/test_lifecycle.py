"""Instrumenting and undoing it, what a node records, streams (tokens, cut short), step identity."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import litellm
import pytest
from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper
from litellm_helpers import MESSAGES, MODE_IDS, MODEL, MODES, TOOLS, complete, drain, ends, text_of

import graphmind
from graphmind.testing import FakeHub
from graphmind_litellm import instrument_litellm, uninstrument_litellm
from graphmind_litellm._apis import APIS
from graphmind_openai.testing import FakeOpenAI


def test_instrument_is_idempotent_and_uninstrument_restores_the_very_originals(gm: graphmind.Client) -> None:
    originals = {api.attr: getattr(litellm, api.attr) for api in APIS}
    assert instrument_litellm(session=gm)
    wrapped = {api.attr: getattr(litellm, api.attr) for api in APIS}
    assert all(wrapped[a] is not originals[a] for a in originals)
    assert instrument_litellm(session=gm)  # twice = once
    assert all(getattr(litellm, a) is wrapped[a] for a in originals)
    uninstrument_litellm()
    assert all(getattr(litellm, a) is originals[a] for a in originals)
    uninstrument_litellm()  # harmless
    assert all(getattr(litellm, a) is originals[a] for a in originals)


def test_a_disabled_session_patches_nothing_and_starts_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    monkeypatch.setenv("GRAPHMIND_DISABLED", "1")
    originals = {api.attr: getattr(litellm, api.attr) for api in APIS}
    threads = threading.active_count()
    session = graphmind.Client(app="off")
    assert instrument_litellm(session=session) is False
    assert all(getattr(litellm, a) is originals[a] for a in originals)
    assert threading.active_count() == threads
    session.dispose()


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_a_call_is_one_llm_step_with_model_provider_messages_reply_and_usage(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    fake.script(["Day one: the Egyptian Museum."])
    result = await complete(is_async, **kw, tools=TOOLS, stream=stream)
    if stream:
        assert text_of(await drain(is_async, result)) == "Day one: the Egyptian Museum."
    end = ends(fakehub)[0]
    started = next(e for e in fakehub.events if e["type"] == "node.started" and e["nodeId"] == "llm:step")
    assert started["attrs"]["model"] == MODEL and started["attrs"]["provider"] == "openai"
    assert started["input"]["messages"][1] == {"role": "user", "content": "Plan a day in Cairo"}
    assert started["input"]["tools"] == ["search_flights"]
    assert end["type"] == "node.finished"
    assert end["output"]["content"] == "Day one: the Egyptian Museum."
    if not stream:  # LiteLLM reports usage and its cost on a plain reply
        assert end["usage"]["inputTokens"] > 0 and end["usage"]["totalTokens"] > 0
        assert "costUsd" in end["usage"]
    hint = next(e for e in fakehub.events if e["type"] == "graph.hint")
    assert hint["nodes"] == [{"nodeId": "tool:search_flights", "kind": "tool", "name": "search_flights"}]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_streamed_tokens_reach_the_hub_while_the_stream_is_read(
    instrumented: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any], is_async: bool
) -> None:
    fake.script(["one two three four five six"])
    stream = await complete(is_async, **kw, stream=True)
    assert isinstance(stream, CustomStreamWrapper)  # the app keeps LiteLLM's own type
    it = stream.__aiter__() if is_async else iter(stream)
    for _ in range(3):
        chunk = await it.__anext__() if is_async else next(it)
    assert chunk.choices
    fakehub.wait_for(lambda: bool(fakehub.of_type("node.token")), what="node.token before the stream ends")
    assert not [e for e in fakehub.events if e["type"] == "node.finished"]
    await drain(is_async, stream)
    end = ends(fakehub)[0]
    assert end["output"]["content"] == "one two three four five six" and "cutShort" not in end
    tokens = "".join(d["v"] for e in fakehub.of_type("node.token") for d in e["deltas"] if d["t"] == "text")
    assert tokens == "one two three four five six"


async def test_an_async_stream_dropped_half_read_still_finishes_its_node(
    instrumented: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    fake.script(["one two three four five six"])
    stream = await litellm.acompletion(**kw, stream=True)
    it = stream.__aiter__()
    for _ in range(2):
        await it.__anext__()
    del it, stream  # dropped half read, never closed
    gc.collect()
    end = ends(fakehub)[0]
    assert end["type"] == "node.finished" and end["cutShort"] is True


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_a_stream_closed_early_finishes_its_node_cut_short(
    instrumented: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any], is_async: bool
) -> None:
    fake.script(["one two three four five six"])
    stream = await complete(is_async, **kw, stream=True)
    if is_async:
        async for _chunk in stream:
            break
        await stream.aclose()
    else:
        with stream:
            for _chunk in stream:
                break
    end = ends(fakehub)[0]
    assert end["type"] == "node.finished" and end["cutShort"] is True
    assert fake.request_count == 1


async def test_a_streamed_tool_call_is_recorded(
    instrumented: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    fake.script([FakeOpenAI.tool_call("search_flights", {"to": "CAI"}, call_id="call_1")])
    list(litellm.completion(**kw, tools=TOOLS, stream=True))
    end = ends(fakehub)[0]
    assert end["output"]["tool_calls"] == [
        {"id": "call_1", "name": "search_flights", "arguments": '{"to": "CAI"}'}
    ]
    assert end["output"]["finish_reason"] == "tool_calls"


async def test_steps_of_one_agent_turn_share_an_invocation(
    instrumented: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    fake.script([FakeOpenAI.tool_call("search_flights", {"to": "CAI"}, call_id="call_1"), "done"])
    with instrumented.run("trip"):
        first = litellm.completion(**kw, tools=TOOLS)
        messages = [
            *MESSAGES,
            first.choices[0].message.model_dump(),
            {"role": "tool", "tool_call_id": "call_1", "content": "MS 985"},
        ]
        litellm.completion(**{**kw, "messages": messages}, tools=TOOLS)
    ids = [e["instanceId"] for e in ends(fakehub, 2)]
    assert ids[0].endswith(":s1") and ids[1].endswith(":s2")
    assert ids[0].split(":")[0] == ids[1].split(":")[0]


async def test_a_tool_run_under_tool_call_takes_the_models_call_id(
    instrumented: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    fake.script([FakeOpenAI.tool_call("search_flights", {"to": "CAI"}, call_id="call_7")])

    @instrumented.tool("search_flights")
    def search_flights(to: str) -> str:
        return "MS 985"

    with instrumented.run("trip"):
        call = litellm.completion(**kw, tools=TOOLS).choices[0].message.tool_calls[0]
        with instrumented.tool_call(call.id):
            search_flights(to="CAI")
    tool = ends(fakehub, node_id="tool:search_flights")[0]
    assert tool["instanceId"] == "call_7"


async def test_embedding_text_completion_and_responses_are_nodes_too(
    instrumented: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    fakehub.set_debug(breakpoints=[("llm:embedding", "before"), ("llm:step", "before")])
    fakehub.auto_answer(
        lambda frame: ("inject", [0.5, 0.25] if frame["nodeId"] == "llm:embedding" else "from the debugger")
    )
    vectors = litellm.embedding(
        model="openai/text-embedding-3-small", input=["hi"], api_base=fake.base_url, api_key="k"
    )
    assert vectors.data[0]["embedding"] == [0.5, 0.25]
    text = litellm.text_completion(model="openai/gpt-test", prompt="hi", api_base=fake.base_url, api_key="k")
    assert text.choices[0].text == "from the debugger"
    reply = await litellm.aresponses(model="openai/gpt-test", input="hi", api_base=fake.base_url, api_key="k")
    assert reply.output[0].content[0].text == "from the debugger"
    assert fake.request_count == 0
    assert len(ends(fakehub, 2)) == 2 and len(ends(fakehub, 1, "llm:embedding")) == 1


async def test_a_call_from_another_thread_in_an_event_loop_does_not_block_the_loop(
    instrumented: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    task = asyncio.create_task(ticker())
    call = asyncio.create_task(litellm.acompletion(**kw))
    paused = await asyncio.to_thread(fakehub.next_paused)
    before = ticks
    await asyncio.sleep(0.1)
    assert ticks > before  # the loop kept running while the gate was held
    fakehub.resolve(paused["gateId"], "continue")
    await call
    task.cancel()


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_a_failure_to_describe_the_request_runs_the_call_unrecorded_never_broken(
    instrumented: graphmind.Client,
    fakehub: FakeHub,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    is_async: bool,
) -> None:
    """Describing reads the app's messages (another thread may be changing them): a failure there is
    warned about and the call goes to LiteLLM as if GraphMind were not there."""
    from graphmind_litellm import _call

    def broken(*args: Any) -> Any:
        raise RuntimeError("dictionary changed size during iteration")

    monkeypatch.setattr(_call, "node_spec", broken)
    caplog.set_level("WARNING", logger="graphmind")
    fake.script(["Day one: the Egyptian Museum."])
    result = await complete(is_async, **kw)
    assert result.choices[0].message.content == "Day one: the Egyptian Museum."
    with instrumented.span("marker", kind="custom"):
        pass
    fakehub.wait_for(
        lambda: any(e.get("nodeId") == "custom:marker" for e in fakehub.events), what="the marker"
    )
    assert not [e for e in fakehub.events if e.get("nodeId") == "llm:step"]  # no half-recorded node
    assert "could not describe a request of llm:step, so the call runs unrecorded" in caplog.text
