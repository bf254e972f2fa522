"""The gate matrix of an `llm:step` node for create, create(stream=True) and the stream() helper,
sync and async, against an in-process hub (FakeHub) and the loopback provider."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic_shapes import SHAPES, TEXT, TOOL_USE, close, new_client

import graphmind
from graphmind import RunAborted
from graphmind.testing import FakeHub
from graphmind_anthropic import instrument_anthropic
from graphmind_anthropic.testing import FakeAnthropic

MATRIX = ["create", "create_stream", "stream_helper"]
ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])


def _ends(hub: FakeHub) -> list[dict[str, Any]]:
    return [
        e for e in hub.events if e["type"] in ("node.finished", "node.error") and e["nodeId"] == "llm:step"
    ]


def _merged(value: Any) -> Any:
    """A snapshot with each content block's deltas joined (the provider splits a reply into many)."""
    if isinstance(value, dict) and "text" in value:
        return {**value, "text": "".join(value["text"])}
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for event in value:
        prev = out[-1] if out else None
        if (
            event["type"] == "content_block_delta"
            and prev is not None
            and prev["type"] == "content_block_delta"
            and prev["index"] == event["index"]
        ):
            delta = dict(prev["delta"])
            for key in ("text", "partial_json", "thinking"):
                if key in delta:
                    delta[key] += event["delta"][key]
            out[-1] = {**prev, "delta": delta}
        else:
            out.append(event)
    return out


def _final_text(value: Any) -> str:
    """The reply text a shape's snapshot holds (a Message, a list of events, or the helper's result)."""
    if isinstance(value, dict) and "final" in value:
        value = value["final"]
    if isinstance(value, dict):
        return "".join(b.get("text", "") for b in value["content"] if b["type"] == "text")
    return "".join(e["delta"].get("text", "") for e in value if e["type"] == "content_block_delta")


async def _bare(fake: FakeAnthropic, shape: Any, reply: Any, is_async: bool) -> tuple[type, Any]:
    client = new_client(fake, is_async)
    fake.script([reply])
    try:
        return await shape(client)
    finally:
        await close(client)


@ASYNC
@pytest.mark.parametrize("name", MATRIX)
async def test_before_inject_of_the_bare_reply_is_field_for_field_the_bare_result_with_zero_requests(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub, name: str, is_async: bool
) -> None:
    shape, _ = SHAPES[name]
    bare_client = new_client(fake, is_async)
    fake.script([TOOL_USE])
    message = (
        await bare_client.messages.create(
            model="claude-test",
            max_tokens=256,
            system="You plan trips.",
            messages=[{"role": "user", "content": "Plan a day in Cairo"}],
        )
        if is_async
        else bare_client.messages.create(
            model="claude-test",
            max_tokens=256,
            system="You plan trips.",
            messages=[{"role": "user", "content": "Plan a day in Cairo"}],
        )
    )
    await close(bare_client)
    body = message.model_dump(mode="json", exclude_none=True)  # Anthropic's own body: what the viewer shows
    bare_type, bare_value = await _bare(fake, shape, TOOL_USE, is_async)
    before = fake.request_count
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", body)
    client = instrument_anthropic(new_client(fake, is_async), session=gm)
    got_type, got_value = await shape(client)
    await close(client)
    assert fake.request_count == before
    assert got_type is bare_type
    assert _merged(got_value) == _merged(bare_value)
    fakehub.wait_for(lambda: bool(_ends(fakehub)), what="node end")
    end = _ends(fakehub)[0]
    assert end["injected"] is True and end["output"]["tool_calls"][0]["id"] == "toolu_1"


@ASYNC
@pytest.mark.parametrize("name", MATRIX)
async def test_before_inject_of_a_string_gives_the_sdk_type_with_that_text(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub, name: str, is_async: bool
) -> None:
    shape, _ = SHAPES[name]
    bare_type, _ = await _bare(fake, shape, TEXT, is_async)
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", "from the debugger")
    before = fake.request_count
    client = instrument_anthropic(new_client(fake, is_async), session=gm)
    got_type, got_value = await shape(client)
    await close(client)
    assert got_type is bare_type and _final_text(got_value) == "from the debugger"
    assert fake.request_count == before


@ASYNC
@pytest.mark.parametrize("name", MATRIX)
async def test_before_abort_raises_run_aborted_without_a_request(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub, name: str, is_async: bool
) -> None:
    shape, _ = SHAPES[name]
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("abort")
    client = instrument_anthropic(new_client(fake, is_async), session=gm)
    with pytest.raises(RunAborted):
        await shape(client)
    await close(client)
    assert fake.request_count == 0


@ASYNC
@pytest.mark.parametrize("name", MATRIX)
async def test_after_continue_gives_the_reply_after_inject_replaces_it_after_retry_resends(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub, name: str, is_async: bool
) -> None:
    shape, _ = SHAPES[name]
    answers = iter([("continue", None), ("inject", "Replaced."), ("retry", None), ("continue", None)])
    fakehub.set_debug(breakpoints=[("llm:step", "after")])
    fakehub.auto_answer(lambda frame: next(answers))
    client = instrument_anthropic(new_client(fake, is_async), session=gm)
    fake.script(["First.", "Second.", "Third.", "Fourth."])
    assert _final_text((await shape(client))[1]) == "First."
    assert _final_text((await shape(client))[1]) == "Replaced."
    assert _final_text((await shape(client))[1]) == "Fourth."  # Third. was held, retried, Fourth. continued
    await close(client)
    assert fake.request_count == 4
    paused = fakehub.of_type("exec.paused")
    assert [p["output"]["content"] for p in paused] == ["First.", "Second.", "Third.", "Fourth."]


@ASYNC
@pytest.mark.parametrize("name", MATRIX)
async def test_error_gate_after_a_529_retry_succeeds_and_continue_raises_the_sdks_error(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub, name: str, is_async: bool
) -> None:
    shape, _ = SHAPES[name]
    fakehub.set_debug(pause_on_error="on")
    answers = iter([("retry", None), ("continue", None)])
    fakehub.auto_answer(lambda frame: next(answers))
    client = instrument_anthropic(new_client(fake, is_async, max_retries=0), session=gm)
    fake.script([FakeAnthropic.error(529), "After the overload."])
    assert _final_text((await shape(client))[1]) == "After the overload."
    fake.script([FakeAnthropic.error(529)])
    with pytest.raises(anthropic.OverloadedError):
        await shape(client)
    await close(client)
    assert fake.request_count == 3
    paused = fakehub.of_type("exec.paused")
    assert [(p["gate"], p["error"]["name"]) for p in paused] == [("error", "OverloadedError")] * 2


@ASYNC
@pytest.mark.parametrize("name", MATRIX)
async def test_error_gate_inject_answers_instead(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub, name: str, is_async: bool
) -> None:
    shape, _ = SHAPES[name]
    fakehub.set_debug(pause_on_error="on")
    fakehub.auto_answer("inject", "Answered by a person.")
    client = instrument_anthropic(new_client(fake, is_async), session=gm)
    fake.script([FakeAnthropic.error(429)])
    assert _final_text((await shape(client))[1]) == "Answered by a person."
    await close(client)


def test_the_sdks_own_retries_stay_inside_one_node(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = instrument_anthropic(new_client(fake, False, max_retries=2), session=gm)
    fake.script([FakeAnthropic.error(529), FakeAnthropic.error(429), TEXT])
    result = client.messages.create(
        model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    )
    assert result.content[0].text == TEXT
    assert fake.request_count == 3
    fakehub.wait_for(lambda: bool(_ends(fakehub)), what="node end")
    assert len(fakehub.of_type("node.started")) == 1 and _ends(fakehub)[0]["type"] == "node.finished"


def test_an_injected_value_of_the_wrong_shape_holds_the_gate_again(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    answers = iter(
        [
            ("inject", 42),
            ("inject", {"tool_calls": [{"arguments": {}}]}),
            ("inject", {"content": [{"type": "nope"}]}),
            ("continue", None),
        ]
    )
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer(lambda frame: next(answers))
    fake.script([TEXT])
    client = instrument_anthropic(new_client(fake, False), session=gm)
    result = client.messages.create(
        model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    )
    assert result.content[0].text == TEXT
    assert len(fakehub.of_type("exec.paused")) == 4
    assert fake.request_count == 1


@ASYNC
async def test_a_stream_closed_early_finishes_its_node_cut_short(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub, is_async: bool
) -> None:
    client = instrument_anthropic(new_client(fake, is_async), session=gm)
    fake.script([TEXT])
    kw: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
    }
    if is_async:
        async with client.messages.stream(**kw) as stream:
            async for _ in stream.text_stream:
                break
    else:
        with client.messages.stream(**kw) as stream:
            for _ in stream.text_stream:
                break
    await close(client)
    fakehub.wait_for(lambda: bool(_ends(fakehub)), what="node end")
    end = _ends(fakehub)[0]
    assert end["type"] == "node.finished" and end["cutShort"] is True
    assert TEXT.startswith(end["output"]["content"]) and end["output"]["content"] != TEXT


def test_the_request_timeout_does_not_run_while_the_before_gate_holds(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    import threading
    import time

    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    client = instrument_anthropic(new_client(fake, False, timeout=0.5), session=gm)
    fake.script([TEXT])
    out: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: out.update(
            value=client.messages.create(
                model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
        )
    )
    worker.start()
    paused = fakehub.next_paused()
    time.sleep(1.0)  # a person reading the held step for twice the request timeout (not synchronisation)
    fakehub.resolve(paused["gateId"], "continue")
    worker.join(10)
    assert out["value"].content[0].text == TEXT
