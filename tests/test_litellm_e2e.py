"""Issue 12 acceptance against the real hub (a subprocess) and the loopback fake provider speaking the
OpenAI wire format: LiteLLM calls held, injected, retried and streamed through the hub's control API."""

from __future__ import annotations

import os

# Before litellm is imported: else it fetches a model cost map from the internet at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import json
from collections.abc import Iterator
from typing import Any

import litellm
import pytest
from litellm import ModelResponse
from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

import graphmind
from graphmind_litellm import GraphmindLogger, instrument_litellm, uninstrument_litellm
from graphmind_openai.testing import TRIP_MESSAGES, TRIP_TOOLS, FakeOpenAI
from graphmind_server.testing import HubProcess, in_thread, wait_for

MODEL = "openai/gpt-4o-mini"
MESSAGES = TRIP_MESSAGES
TOOLS = TRIP_TOOLS


@pytest.fixture
def gm(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="litellm-e2e", url=hub.ingest_url)
    assert c.ready(5)
    assert instrument_litellm(session=c)
    yield c
    uninstrument_litellm()
    c.dispose()


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(chunks=6) as provider:
        yield provider


@pytest.fixture
def kw(fake: FakeOpenAI) -> dict[str, Any]:
    """LiteLLM's and the OpenAI SDK's own retries off: the error gate sees the first 429."""
    return {
        "model": MODEL,
        "api_base": fake.base_url,
        "api_key": "test-key",
        "num_retries": 0,
        "max_retries": 0,
    }


def _events(hub: HubProcess, run_id: str, status: str) -> list[dict[str, Any]]:
    wait_for(lambda: hub.api("GET", f"/api/runs/{run_id}")[1].get("status") == status, 10, f"run {status}")
    return hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]


def _breakpoint(hub: HubProcess, gate: str) -> None:
    assert hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "llm:step", "gate": gate}]})[0] == 200


def _answer(hub: HubProcess, action: str, value: Any = None) -> dict[str, Any]:
    gate = hub.held_gates()[0]
    body: dict[str, Any] = {"action": action} if value is None else {"action": action, "value": value}
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", body)[0] == 200
    return gate


def test_before_inject_returns_a_model_response_and_steers_the_tool_loop(
    hub: HubProcess, gm: graphmind.Client, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    _breakpoint(hub, "before")
    fake.script(["Fly out at 09:40."])
    ran: list[str] = []

    def search_flights(to: str) -> str:
        ran.append(to)
        return f"{to} 09:40"

    tools = gm.wrap_tools({"search_flights": search_flights})
    replies: list[ModelResponse] = []

    def agent() -> str:
        with gm.run("trip") as run:
            ran.append(run.run_id)
            messages: list[Any] = list(MESSAGES)
            while True:
                response = litellm.completion(**kw, messages=messages, tools=TOOLS)
                replies.append(response)
                reply = response.choices[0].message
                messages.append(reply.model_dump())
                if not reply.tool_calls:
                    return str(reply.content)
                for call in reply.tool_calls:
                    # no gm.tool_call: the tool takes the model's call id by itself (issue 16 item 6)
                    result = tools[call.function.name](**json.loads(call.function.arguments))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    t, out = in_thread(agent)
    injected = {
        "content": None,
        "tool_calls": [{"id": "call_x", "name": "search_flights", "arguments": {"to": "CAI"}}],
    }
    gate = _answer(hub, "inject", injected)
    assert (gate["nodeId"], gate["gate"]) == ("llm:step", "before")
    wait_for(lambda: len(ran) == 2, 10, "the injected tool to run")  # the run id, then the tool
    assert fake.request_count == 0  # the first step never reached the provider
    _answer(hub, "continue")  # the second step goes to the provider
    t.join(30)
    assert out["value"] == "Fly out at 09:40."
    assert isinstance(replies[0], ModelResponse)
    assert replies[0].choices[0].message.tool_calls[0].id == "call_x"
    assert ran[1] == "CAI" and fake.request_count == 1
    events = _events(hub, ran[0], "finished")
    tool = next(e for e in events if e["type"] == "node.started" and e["nodeId"] == "tool:search_flights")
    assert tool["instanceId"] == "call_x"  # the tool node takes the injected call's id
    first = next(e for e in events if e["type"] == "node.finished" and e["nodeId"] == "llm:step")
    assert first["injected"] is True and first["output"]["tool_calls"][0]["name"] == "search_flights"


@pytest.mark.parametrize("is_async", [False, True], ids=["completion", "acompletion"])
def test_error_gate_retry_after_a_429_succeeds(
    hub: HubProcess, gm: graphmind.Client, fake: FakeOpenAI, kw: dict[str, Any], is_async: bool
) -> None:
    assert hub.api("GET", "/api/debug")[1]["pauseOnError"] == "on"
    fake.script([FakeOpenAI.error(429), "Second time lucky."])
    runs: list[str] = []

    def agent() -> Any:
        import asyncio

        with gm.run("trip") as run:
            runs.append(run.run_id)
            if is_async:
                return asyncio.run(litellm.acompletion(**kw, messages=MESSAGES))
            return litellm.completion(**kw, messages=MESSAGES)

    t, out = in_thread(agent)
    gate = _answer(hub, "retry")
    assert (gate["gate"], gate["reason"]) == ("error", "error")
    t.join(30)
    assert out["value"].choices[0].message.content == "Second time lucky."
    assert fake.request_count == 2
    events = _events(hub, runs[0], "finished")
    assert next(e for e in events if e["type"] == "exec.paused")["error"]["name"] == "RateLimitError"
    assert [e["type"] for e in events if e["nodeId"] == "llm:step" and e["type"].startswith("node.")][
        -1
    ] == "node.finished"


def test_error_gate_continue_re_raises_litellms_exception(
    hub: HubProcess, gm: graphmind.Client, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    fake.script([FakeOpenAI.error(429)])
    t, out = in_thread(lambda: litellm.completion(**kw, messages=MESSAGES))
    _answer(hub, "continue")
    t.join(30)
    assert isinstance(out["error"], litellm.RateLimitError)


def test_streamed_tokens_reach_the_hub_while_the_stream_is_read_and_a_cut_stream_finishes(
    hub: HubProcess, gm: graphmind.Client, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    fake.script(["one two three four five six seven eight"])
    with gm.run("stream") as run:
        stream = litellm.completion(**kw, messages=MESSAGES, stream=True)
        assert isinstance(stream, CustomStreamWrapper)
        it = iter(stream)
        read = [next(it) for _ in range(4)]

        def tokens() -> list[dict[str, Any]]:
            events = hub.api("GET", f"/api/runs/{run.run_id}/events")[1]["events"]
            return [e for e in events if e["type"] == "node.token"]

        wait_for(lambda: bool(tokens()), 10, "node.token while the stream is open")
        assert not [
            e
            for e in hub.api("GET", f"/api/runs/{run.run_id}/events")[1]["events"]
            if e["type"] == "node.finished"
        ]
        stream.close()  # the app stops reading half way
    assert read[1].choices[0].delta.content
    events = _events(hub, run.run_id, "finished")
    end = next(e for e in events if e["type"] == "node.finished" and e["nodeId"] == "llm:step")
    assert end["cutShort"] is True
    assert end["output"]["content"] == "".join(c.choices[0].delta.content or "" for c in read)


def test_the_logger_alone_holds_an_async_call_and_injects(
    hub: HubProcess, fake: FakeOpenAI, kw: dict[str, Any]
) -> None:
    """`litellm.callbacks = [GraphmindLogger()]` without instrument_litellm(): the async path's hooks."""
    session = graphmind.Client(app="litellm-logger", url=hub.ingest_url)
    assert session.ready(5)
    litellm.callbacks = [GraphmindLogger(session=session)]
    try:
        _breakpoint(hub, "before")

        def agent() -> Any:
            import asyncio

            return asyncio.run(litellm.acompletion(**kw, messages=MESSAGES))

        t, out = in_thread(agent)
        _answer(hub, "inject", "Held and answered by a person.")
        t.join(30)
        assert isinstance(out["value"], ModelResponse)
        assert out["value"].choices[0].message.content == "Held and answered by a person."
        assert fake.request_count == 0
    finally:
        for name in (
            "callbacks",
            "input_callback",
            "success_callback",
            "failure_callback",
            "_async_success_callback",
            "_async_failure_callback",
        ):
            setattr(litellm, name, [])
        session.dispose()
