"""The beta tool runner: its tool calls are `tool:<name>` nodes named after their `tool_use` ids,
gated inside the tool's call (the runner turns a tool's exception into an `is_error` result)."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic import beta_async_tool, beta_tool
from anthropic_shapes import MODEL, close, new_client

import graphmind
from graphmind.testing import FakeHub
from graphmind_anthropic import instrument_anthropic
from graphmind_anthropic.testing import FakeAnthropic

CALLS: list[str] = []


@beta_tool
def search_flights(to: str) -> str:
    """Flights to a city."""
    CALLS.append(f"search_flights:{to}")
    if to == "XXX":
        raise ValueError("no such airport")
    return f"{to}: 09:40"


@beta_tool
def book_hotel(city: str) -> str:
    """Books a hotel."""
    CALLS.append(f"book_hotel:{city}")
    return f"booked in {city}"


@beta_async_tool
async def asearch_flights(to: str) -> str:
    """Flights to a city."""
    CALLS.append(f"asearch_flights:{to}")
    return f"{to}: 09:40"


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLS.clear()


def _started(hub: FakeHub, node_id: str) -> list[dict[str, Any]]:
    return [e for e in hub.events if e["type"] == "node.started" and e["nodeId"] == node_id]


def _runner(client: Any, tools: list[Any]) -> Any:
    return client.beta.messages.tool_runner(
        model=MODEL, max_tokens=256, messages=[{"role": "user", "content": "Fly me to Cairo"}], tools=tools
    )


def test_tool_calls_are_nodes_named_after_their_tool_use_ids(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    fake.script(
        [FakeAnthropic.tool_use("search_flights", {"to": "CAI"}, tool_use_id="toolu_42"), "Fly out at 09:40."]
    )
    client = instrument_anthropic(new_client(fake, False), session=gm)
    with gm.run("trip"):
        final = _runner(client, [search_flights]).until_done()
    assert final.content[0].text == "Fly out at 09:40."
    tool = fakehub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "tool:search_flights")
    assert tool["instanceId"] == "toolu_42" and tool["output"] == "CAI: 09:40"
    assert _started(fakehub, "tool:search_flights")[0]["input"] == {"to": "CAI"}
    steps = _started(fakehub, "llm:step")
    assert len(steps) == 2 and steps[0]["attrs"]["api"] == "beta.messages"
    # The tool result went back to the model.
    second = fake.requests[1].body["messages"]
    assert second[-1]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_42",
        "content": "CAI: 09:40",
    }


def test_an_injected_tool_use_makes_the_runner_call_the_injected_tool_next(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    fake.script([FakeAnthropic.tool_use("search_flights", {"to": "CAI"}), "Booked."])
    injected = {
        "content": None,
        "tool_calls": [{"id": "toolu_inj", "name": "book_hotel", "arguments": {"city": "Cairo"}}],
    }
    answers = iter([("inject", injected)])
    fakehub.set_debug(breakpoints=[("llm:step", "after")])
    fakehub.auto_answer(lambda frame: next(answers, ("continue", None)))
    client = instrument_anthropic(new_client(fake, False), session=gm)
    final = _runner(client, [search_flights, book_hotel]).until_done()
    assert final.content[0].text == "Booked."
    assert CALLS == ["book_hotel:Cairo"]
    tool = fakehub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "tool:book_hotel")
    assert tool["instanceId"] == "toolu_inj"
    assert fake.requests[1].body["messages"][-1]["content"][0]["tool_use_id"] == "toolu_inj"


def test_a_tool_error_holds_the_tool_error_gate_and_retry_runs_it_again(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    fake.script([FakeAnthropic.tool_use("search_flights", {"to": "XXX"}, tool_use_id="toolu_e"), "Sorry."])
    fakehub.set_debug(pause_on_error="on")
    answers = iter([("retry", None), ("inject", "XXX: by boat")])
    fakehub.auto_answer(lambda frame: next(answers))
    client = instrument_anthropic(new_client(fake, False), session=gm)
    _runner(client, [search_flights]).until_done()
    assert CALLS == ["search_flights:XXX", "search_flights:XXX"]
    paused = [p for p in fakehub.of_type("exec.paused") if p["nodeId"] == "tool:search_flights"]
    assert [(p["gate"], p["error"]["name"]) for p in paused] == [("error", "ValueError")] * 2
    result = fake.requests[1].body["messages"][-1]["content"][0]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_e", "content": "XXX: by boat"}


def test_error_gate_continue_lets_the_runner_report_the_error_to_the_model(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    fake.script([FakeAnthropic.tool_use("search_flights", {"to": "XXX"}, tool_use_id="toolu_e"), "Sorry."])
    fakehub.set_debug(pause_on_error="on")
    fakehub.auto_answer("continue")
    client = instrument_anthropic(new_client(fake, False), session=gm)
    _runner(client, [search_flights]).until_done()
    result = fake.requests[1].body["messages"][-1]["content"][0]
    assert result["is_error"] is True and "no such airport" in str(result["content"])
    fakehub.wait_event(lambda e: e["type"] == "node.error" and e["nodeId"] == "tool:search_flights")


async def test_the_async_runner_gates_its_tools(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    fake.script([FakeAnthropic.tool_use("asearch_flights", {"to": "CAI"}, tool_use_id="toolu_a"), "Done."])
    client = instrument_anthropic(new_client(fake, True), session=gm)
    final = await _runner(client, [asearch_flights]).until_done()
    await close(client)
    assert final.content[0].text == "Done."
    tool = fakehub.wait_event(
        lambda e: e["type"] == "node.finished" and e["nodeId"] == "tool:asearch_flights"
    )
    assert tool["instanceId"] == "toolu_a" and tool["output"] == "CAI: 09:40"


def test_the_streaming_runner_gates_its_tools(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    fake.script([FakeAnthropic.tool_use("search_flights", {"to": "CAI"}, tool_use_id="toolu_s"), "Done."])
    client = instrument_anthropic(new_client(fake, False), session=gm)
    runner = client.beta.messages.tool_runner(
        model=MODEL,
        max_tokens=256,
        messages=[{"role": "user", "content": "Fly"}],
        tools=[search_flights],
        stream=True,
    )
    for stream in runner:
        for _ in stream:
            pass
    tool = fakehub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "tool:search_flights")
    assert tool["instanceId"] == "toolu_s"
