"""Issue 6 acceptance against the real hub (a subprocess) and the loopback fake provider:
an instrumented OpenAI client steered through the hub's control API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI

import graphmind
from graphmind import RunAborted
from graphmind_openai import instrument_openai
from graphmind_openai.testing import TRIP_MESSAGES, TRIP_TOOLS, FakeOpenAI
from graphmind_server.testing import HubProcess, in_thread, wait_for

MODEL = "gpt-test"
MESSAGES = TRIP_MESSAGES
TOOLS = TRIP_TOOLS


@pytest.fixture
def gm(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="openai-e2e", url=hub.ingest_url)
    assert c.ready(5)
    yield c
    c.dispose()


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(chunks=6) as provider:
        yield provider


@pytest.fixture
def client(fake: FakeOpenAI, gm: graphmind.Client) -> Iterator[OpenAI]:
    c = instrument_openai(OpenAI(base_url=fake.base_url, api_key="test-key", max_retries=0), session=gm)
    yield c
    c.close()


def _events(hub: HubProcess, run_id: str, status: str) -> list[dict[str, Any]]:
    wait_for(lambda: hub.api("GET", f"/api/runs/{run_id}")[1].get("status") == status, 10, f"run {status}")
    return hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]


def _breakpoint(hub: HubProcess, gate: str) -> None:
    status, _ = hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "llm:step", "gate": gate}]})
    assert status == 200


def test_before_inject_makes_zero_requests_to_the_provider(
    hub: HubProcess, gm: graphmind.Client, client: OpenAI, fake: FakeOpenAI
) -> None:
    _breakpoint(hub, "before")
    runs: list[str] = []

    def agent() -> Any:
        with gm.run("trip") as run:
            runs.append(run.run_id)
            return client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=TOOLS)

    t, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert (gate["nodeId"], gate["gate"]) == ("llm:step", "before")
    injected = {
        "content": None,
        "tool_calls": [{"id": "call_x", "name": "search_flights", "arguments": {"to": "CAI"}}],
    }
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "inject", "value": injected})[0] == 200
    t.join(10)
    result = out["value"]
    assert isinstance(result, openai.types.chat.ChatCompletion)
    call = result.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_x",
        "search_flights",
        {"to": "CAI"},
    )
    assert result.choices[0].finish_reason == "tool_calls"
    assert fake.request_count == 0
    events = _events(hub, runs[0], "finished")
    finished = next(e for e in events if e["type"] == "node.finished" and e["nodeId"] == "llm:step")
    assert finished["injected"] is True
    hint = next(e for e in events if e["type"] == "graph.hint")
    assert hint["nodes"] == [{"nodeId": "tool:search_flights", "kind": "tool", "name": "search_flights"}]


def test_after_inject_on_a_stream_replays_the_injected_reply(
    hub: HubProcess, gm: graphmind.Client, client: OpenAI, fake: FakeOpenAI
) -> None:
    _breakpoint(hub, "after")
    fake.script(["The real reply."])
    runs: list[str] = []

    def agent() -> Any:
        with gm.run("trip") as run:
            runs.append(run.run_id)
            with client.chat.completions.stream(model=MODEL, messages=MESSAGES) as stream:
                deltas = [e.delta for e in stream if e.type == "content.delta"]
                return deltas, stream.get_final_completion()

    t, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert gate["gate"] == "after"
    held = next(
        e for e in hub.api("GET", f"/api/runs/{runs[0]}/events")[1]["events"] if e["type"] == "exec.paused"
    )
    assert held["output"]["content"] == "The real reply."
    assert (
        hub.api(
            "POST", f"/api/gates/{gate['gateId']}", {"action": "inject", "value": "Injected by a person."}
        )[0]
        == 200
    )
    t.join(10)
    deltas, final = out["value"]
    assert "".join(deltas) == "Injected by a person."
    assert final.choices[0].message.content == "Injected by a person."
    assert fake.request_count == 1
    events = _events(hub, runs[0], "finished")
    finished = next(e for e in events if e["type"] == "node.finished" and e["nodeId"] == "llm:step")
    assert finished["injected"] is True and finished["output"]["content"] == "Injected by a person."


def test_error_gate_retry_after_a_429_resends(
    hub: HubProcess, gm: graphmind.Client, client: OpenAI, fake: FakeOpenAI
) -> None:
    assert hub.api("GET", "/api/debug")[1]["pauseOnError"] == "on"
    fake.script([FakeOpenAI.error(429), "Second time lucky."])
    runs: list[str] = []

    def agent() -> Any:
        with gm.run("trip") as run:
            runs.append(run.run_id)
            return client.responses.create(model=MODEL, input="Plan a day in Cairo")

    t, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert (gate["gate"], gate["reason"]) == ("error", "error")
    assert fake.request_count == 1
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "retry"})[0] == 200
    t.join(10)
    assert out["value"].output_text == "Second time lucky."
    assert fake.request_count == 2
    events = _events(hub, runs[0], "finished")
    paused = [e for e in events if e["type"] == "exec.paused"]
    assert paused[0]["error"]["name"] == "RateLimitError"
    assert [e["type"] for e in events if e["nodeId"] == "llm:step" and e["type"].startswith("node.")][
        -1
    ] == "node.finished"


def test_error_gate_continue_raises_the_sdks_exception(
    hub: HubProcess, gm: graphmind.Client, client: OpenAI, fake: FakeOpenAI
) -> None:
    fake.script([FakeOpenAI.error(429)])
    t, out = in_thread(lambda: client.chat.completions.create(model=MODEL, messages=MESSAGES))
    gate = hub.held_gates()[0]
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0] == 200
    t.join(10)
    assert isinstance(out["error"], openai.RateLimitError)


def test_abort_stops_the_run_without_a_request(
    hub: HubProcess, gm: graphmind.Client, client: OpenAI, fake: FakeOpenAI
) -> None:
    _breakpoint(hub, "before")
    runs: list[str] = []

    def agent() -> Any:
        with gm.run("trip") as run:
            runs.append(run.run_id)
            return list(client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True))

    t, out = in_thread(agent)
    hub.held_gates()[0]
    assert hub.api("POST", f"/api/runs/{runs[0]}/abort") == (200, {"ok": True})
    t.join(10)
    assert isinstance(out["error"], RunAborted)
    assert fake.request_count == 0
    _events(hub, runs[0], "aborted")


def test_an_agent_loop_links_tool_calls_to_tool_nodes(
    hub: HubProcess, gm: graphmind.Client, client: OpenAI, fake: FakeOpenAI
) -> None:
    """The README's loop: a tool_calls reply, tools gated by wrap_tools, the reply after."""
    fake.script(
        [FakeOpenAI.tool_call("search_flights", {"to": "CAI"}, call_id="call_42"), "Fly out at 09:40."]
    )

    def search_flights(to: str) -> str:
        return f"{to} 09:40"

    tools = gm.wrap_tools({"search_flights": search_flights})
    with gm.run("trip") as run:
        messages: list[Any] = list(MESSAGES)
        while True:
            reply = (
                client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS).choices[0].message
            )
            messages.append(reply)
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                # no gm.tool_call: the tool takes the model's call id by itself (issue 16 item 6)
                result = tools[call.function.name](**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    assert reply.content == "Fly out at 09:40."
    events = _events(hub, run.run_id, "finished")
    steps = [e for e in events if e["type"] == "node.started" and e["nodeId"] == "llm:step"]
    assert [s["instanceId"].rsplit(":", 1)[1] for s in steps] == ["s1", "s2"]
    tool = next(e for e in events if e["type"] == "node.started" and e["nodeId"] == "tool:search_flights")
    assert tool["instanceId"] == "call_42"
    first_step_end = next(
        e for e in events if e["type"] == "node.finished" and e["instanceId"] == steps[0]["instanceId"]
    )
    assert first_step_end["output"]["tool_calls"][0]["id"] == "call_42"
