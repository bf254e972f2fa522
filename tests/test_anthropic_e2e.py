"""Issue 14 acceptance against the real hub (a subprocess) and the loopback fake provider: an
instrumented Anthropic client steered through the hub's control API."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic import Anthropic

import graphmind
from graphmind_anthropic import instrument_anthropic
from graphmind_anthropic.testing import FakeAnthropic
from graphmind_server.testing import HubProcess, in_thread, wait_for

sys.path.insert(0, str(Path(__file__).parents[1] / "packages" / "graphmind-anthropic" / "tests"))
from anthropic_shapes import MESSAGES, MODEL, SHAPES, SYSTEM, TOOL_USE, TOOLS, new_client


@pytest.fixture
def gm(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="anthropic-e2e", url=hub.ingest_url)
    assert c.ready(5)
    yield c
    c.dispose()


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(chunks=6) as provider:
        yield provider


@pytest.fixture
def client(fake: FakeAnthropic, gm: graphmind.Client) -> Iterator[Anthropic]:
    c = instrument_anthropic(Anthropic(base_url=fake.base_url, api_key="test-key", max_retries=0), session=gm)
    yield c
    c.close()


def _events(hub: HubProcess, run_id: str, status: str) -> list[dict[str, Any]]:
    wait_for(lambda: hub.api("GET", f"/api/runs/{run_id}")[1].get("status") == status, 10, f"run {status}")
    return hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]


def _breakpoints(hub: HubProcess, *gates: str) -> None:
    status, _ = hub.api(
        "PUT", "/api/debug", {"breakpoints": [{"nodeId": "llm:step", "gate": g} for g in gates]}
    )
    assert status == 200


def _answer(hub: HubProcess, gate: str, action: str, value: Any = None) -> None:
    held = hub.held_gates()[0]
    assert held["gate"] == gate, held
    body = {"action": action} if value is None else {"action": action, "value": value}
    assert hub.api("POST", f"/api/gates/{held['gateId']}", body)[0] == 200


def _text(value: Any) -> str:
    if isinstance(value, dict) and "final" in value:
        value = value["final"]
    if isinstance(value, dict):
        return "".join(b.get("text", "") for b in value["content"] if b["type"] == "text")
    return "".join(e["delta"].get("text", "") for e in value if e["type"] == "content_block_delta")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", ["create", "create_stream", "stream_helper"])
def test_the_gate_matrix_through_the_hub(
    hub: HubProcess, gm: graphmind.Client, fake: FakeAnthropic, name: str, is_async: bool
) -> None:
    shape, _ = SHAPES[name]
    client = instrument_anthropic(new_client(fake, is_async), session=gm)

    def call() -> Any:
        return asyncio.run(shape(client))[1]

    # before: inject (no request), then abort
    _breakpoints(hub, "before")
    t, out = in_thread(call)
    _answer(hub, "before", "inject", "Injected at the before gate.")
    t.join(10)
    assert _text(out["value"]) == "Injected at the before gate." and fake.request_count == 0
    # after: retry re-sends, then continue hands over the second reply
    _breakpoints(hub, "after")
    fake.script(["First.", "Second."])
    t, out = in_thread(call)
    _answer(hub, "after", "retry")
    wait_for(lambda: fake.request_count == 2, 10, "the retry's request")
    _answer(hub, "after", "continue")
    t.join(10)
    assert _text(out["value"]) == "Second."
    # error (pause on error is on by default): a 529, retry succeeds
    _breakpoints(hub)
    fake.script([FakeAnthropic.error(529), "After the overload."])
    t, out = in_thread(call)
    _answer(hub, "error", "retry")
    t.join(10)
    assert _text(out["value"]) == "After the overload." and fake.request_count == 4
    # abort at the before gate
    _breakpoints(hub, "before")
    t, out = in_thread(call)
    _answer(hub, "before", "abort")
    t.join(10)
    assert isinstance(out["error"], graphmind.RunAborted) and fake.request_count == 4


def test_before_inject_returns_field_for_field_what_a_bare_client_returns_with_zero_requests(
    hub: HubProcess, gm: graphmind.Client, client: Anthropic, fake: FakeAnthropic
) -> None:
    bare = Anthropic(base_url=fake.base_url, api_key="test-key", max_retries=0)
    fake.script([TOOL_USE])
    expected = bare.messages.create(
        model=MODEL, max_tokens=256, system=SYSTEM, messages=MESSAGES, tools=TOOLS
    )
    bare.close()
    sent = fake.request_count
    _breakpoints(hub, "before")
    runs: list[str] = []

    def agent() -> Any:
        with gm.run("trip") as run:
            runs.append(run.run_id)
            return client.messages.create(
                model=MODEL, max_tokens=256, system=SYSTEM, messages=MESSAGES, tools=TOOLS
            )

    t, out = in_thread(agent)
    _answer(
        hub, "before", "inject", expected.model_dump(mode="json")
    )  # the reply, as the viewer shows a body
    t.join(10)
    result = out["value"]
    assert type(result) is anthropic.types.Message
    assert result.model_dump() == expected.model_dump()
    assert fake.request_count == sent
    events = _events(hub, runs[0], "finished")
    finished = next(e for e in events if e["type"] == "node.finished" and e["nodeId"] == "llm:step")
    assert finished["injected"] is True and finished["output"]["tool_calls"][0]["id"] == "toolu_1"
    hint = next(e for e in events if e["type"] == "graph.hint")
    assert hint["nodes"] == [{"nodeId": "tool:search_flights", "kind": "tool", "name": "search_flights"}]


def test_error_gate_after_a_529_retry_succeeds_and_continue_reraises_the_sdks_exception(
    hub: HubProcess, gm: graphmind.Client, client: Anthropic, fake: FakeAnthropic
) -> None:
    assert hub.api("GET", "/api/debug")[1]["pauseOnError"] == "on"
    fake.script([FakeAnthropic.error(529), "Second time lucky."])
    runs: list[str] = []

    def agent() -> Any:
        with gm.run("trip") as run:
            runs.append(run.run_id)
            return client.messages.create(model=MODEL, max_tokens=64, messages=MESSAGES)

    t, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert (gate["gate"], gate["reason"]) == ("error", "error")
    assert fake.request_count == 1  # SDK retries off: the error gate saw the first 529
    _answer(hub, "error", "retry")
    t.join(10)
    assert out["value"].content[0].text == "Second time lucky."
    assert fake.request_count == 2
    events = _events(hub, runs[0], "finished")
    assert next(e for e in events if e["type"] == "exec.paused")["error"]["name"] == "OverloadedError"

    fake.script([FakeAnthropic.error(529)])
    t, out = in_thread(lambda: client.messages.create(model=MODEL, max_tokens=64, messages=MESSAGES))
    _answer(hub, "error", "continue")
    t.join(10)
    assert isinstance(out["error"], anthropic.OverloadedError)
    assert out["error"].status_code == 529


def test_an_injected_tool_use_makes_the_loop_call_the_injected_tool_next(
    hub: HubProcess, gm: graphmind.Client, client: Anthropic, fake: FakeAnthropic
) -> None:
    """The README's loop: the model asked for search_flights; a person injects a book_hotel call instead."""
    fake.script([FakeAnthropic.tool_use("search_flights", {"to": "CAI"}), "Booked the Nile Hotel."])
    called: list[str] = []

    def search_flights(to: str) -> str:
        called.append("search_flights")
        return f"{to} 09:40"

    def book_hotel(city: str) -> str:
        called.append("book_hotel")
        return f"Nile Hotel, {city}"

    tools = gm.wrap_tools({"search_flights": search_flights, "book_hotel": book_hotel})
    runs: list[str] = []

    def agent() -> Any:
        with gm.run("trip") as run:
            runs.append(run.run_id)
            messages: list[Any] = list(MESSAGES)
            while True:
                reply = client.messages.create(model=MODEL, max_tokens=256, messages=messages, tools=TOOLS)
                messages.append({"role": "assistant", "content": reply.content})
                uses = [b for b in reply.content if b.type == "tool_use"]
                if not uses:
                    return reply
                results = []
                for use in uses:
                    # no gm.tool_call: the tool takes the model's call id by itself (issue 16 item 6)
                    results.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": use.id,
                            "content": tools[use.name](**use.input),
                        }
                    )
                messages.append({"role": "user", "content": results})

    _breakpoints(hub, "after")
    t, out = in_thread(agent)
    injected = {
        "content": None,
        "tool_calls": [{"id": "toolu_hotel", "name": "book_hotel", "arguments": {"city": "Cairo"}}],
    }
    _answer(hub, "after", "inject", injected)
    _answer(hub, "after", "continue")
    t.join(10)
    assert out["value"].content[0].text == "Booked the Nile Hotel."
    assert called == ["book_hotel"]
    events = _events(hub, runs[0], "finished")
    tool = next(e for e in events if e["type"] == "node.started" and e["nodeId"] == "tool:book_hotel")
    assert tool["instanceId"] == "toolu_hotel"
    assert fake.requests[1].body["messages"][-1]["content"][0]["tool_use_id"] == "toolu_hotel"
