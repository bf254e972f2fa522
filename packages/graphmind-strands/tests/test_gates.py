"""The gates on a Strands agent with two tools, its model Strands' own `OpenAIModel` against the
loopback fake (which counts requests): inject, edit, retry, abort, what the nodes record, and a
recorded run replayed. Every test runs on core's FakeHub and on the real hub process (`graphmind
serve`, driven as the viewer drives it: graphmind_server.testing.KitHub)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from strands_helpers import Bodies, ToolDown, agent, tool_messages

import graphmind
from graphmind.adapter import RunAborted
from graphmind.testing import FakeHub, write_cassette
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess, KitHub
from graphmind_strands import GraphmindHooks, instrument_strands


@pytest.fixture(params=["fake-hub", "real-hub"])
def fakehub(request: pytest.FixtureRequest) -> Iterator[Any]:
    """This module's hub: core's FakeHub, then a fresh KitHub over the module's real hub process."""
    if request.param == "fake-hub":
        with FakeHub() as hub:
            yield hub
        return
    process: HubProcess = request.getfixturevalue("hub_process")
    with KitHub(process) as kit:
        yield kit


def nodes(hub: FakeHub, event_type: str, node_id: str) -> list[dict[str, Any]]:
    hub.wait_for(lambda: any(e.get("type") == "run.finished" for e in hub.events), what="the run's end")
    return [e for e in hub.of_type(event_type) if e.get("nodeId") == node_id]


def instrumented(how: str, fake: FakeOpenAI, bodies: Bodies, gm: graphmind.Client) -> Any:
    if how == "process":
        instrument_strands(session=gm)
        return agent(fake, bodies)
    return agent(fake, bodies, hooks=[GraphmindHooks(session=gm)])


@pytest.mark.parametrize("how", ["process", "hooks"])
async def test_a_plain_run_records_model_steps_and_tool_nodes_with_the_tool_use_id(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, how: str
) -> None:
    bodies = Bodies()
    fake.script([FakeOpenAI.tool_call("search", {"q": "cats"}, call_id="call_1"), "cats are great"])
    result = await instrumented(how, fake, bodies, gm).invoke_async("find cats")
    assert str(result).strip() == "cats are great"
    assert bodies.searches == ["cats"] and fake.request_count == 2
    steps = nodes(fakehub, "node.finished", "llm:step")
    assert len(steps) == 2
    assert steps[0]["output"]["tool_calls"][0]["name"] == "search"
    assert steps[1]["output"]["content"] == "cats are great"
    started = nodes(fakehub, "node.started", "llm:step")
    assert started[0]["attrs"]["model"] == "gpt-4o-mini"
    assert started[1]["input"]["messages"][-1]["role"] == "tool"
    tool = nodes(fakehub, "node.finished", "tool:search")
    assert [t["instanceId"] for t in tool] == ["call_1"] and tool[0]["output"] == "results for cats"
    runs = fakehub.of_type("run.started")
    assert len(runs) == 1 and runs[0]["name"] == "researcher"


async def test_a_tool_inject_runs_no_body_and_the_next_model_request_carries_the_value(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    bodies = Bodies()
    fake.script([FakeOpenAI.tool_call("search", {"q": "cats"}, call_id="call_1"), "done"])
    instrument_strands(session=gm)
    fakehub.set_debug(breakpoints=[("tool:search", "before")])
    fakehub.auto_answer("inject", {"found": "injected cats"})
    await agent(fake, bodies).invoke_async("find cats")
    assert bodies.searches == [], "the tool's body never ran"
    assert tool_messages(fake.requests[1]) == [{"found": "injected cats"}]
    finished = nodes(fakehub, "node.finished", "tool:search")[0]
    assert finished["injected"] is True and finished["instanceId"] == "call_1"


async def test_a_model_inject_makes_no_request_and_its_tool_call_runs_next(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    bodies = Bodies()
    fake.script(["the answer"])
    instrument_strands(session=gm)
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    injected = {"tool_calls": [{"id": "call_dbg", "name": "weather", "arguments": {"city": "Cairo"}}]}
    answers = iter([("inject", injected), ("continue", None)])
    fakehub.auto_answer(lambda _paused: next(answers))
    result = await agent(fake, bodies).invoke_async("weather?")
    assert fake.request_count == 1, "the injected step sent no request; only the step after it did"
    assert bodies.weathers == ["Cairo"] and str(result).strip() == "the answer"
    assert [t["instanceId"] for t in nodes(fakehub, "node.started", "tool:weather")] == ["call_dbg"]
    assert nodes(fakehub, "node.finished", "llm:step")[0]["injected"] is True


async def test_an_edited_tool_input_is_what_the_body_receives(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    bodies = Bodies()
    fake.script([FakeOpenAI.tool_call("search", {"q": "cats"}, call_id="call_1"), "done"])
    instrument_strands(session=gm)
    fakehub.set_debug(breakpoints=[("tool:search", "before")])
    fakehub.auto_answer(lambda _paused: ("continue", None, {"input": {"q": "dogs"}}))
    await agent(fake, bodies).invoke_async("find cats")
    assert bodies.searches == ["dogs"]
    assert tool_messages(fake.requests[1]) == ["results for dogs"]
    finished = nodes(fakehub, "node.finished", "tool:search")[0]
    assert finished["edited"] is True and finished["originalInput"] == {"q": "cats"}


async def test_an_edited_model_request_is_what_the_provider_receives(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    fake.script(["done"])
    instrument_strands(session=gm)
    fakehub.set_debug(breakpoints=[("llm:step", "before")])

    def edit(paused: dict[str, Any]) -> Any:
        edited = dict(paused["input"])
        edited["messages"] = [*edited["messages"][:-1], {"role": "user", "content": "find dogs"}]
        return ("continue", None, {"input": edited})

    fakehub.auto_answer(edit)
    await agent(fake, Bodies()).invoke_async("find cats")
    sent = fake.requests[0].body["messages"]
    assert sent[0]["role"] == "system" and sent[-1]["content"] in (
        "find dogs",
        [{"type": "text", "text": "find dogs"}],
    )


async def test_retry_at_a_tools_error_gate_runs_it_again_to_success(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    bodies = Bodies(fail=ToolDown("the backend is down"))
    fake.script([FakeOpenAI.tool_call("search", {"q": "cats"}, call_id="call_1"), "done"])
    instrument_strands(session=gm)
    fakehub.set_debug(breakpoints=[("tool:search", "error")])
    fakehub.auto_answer("retry")
    await agent(fake, bodies).invoke_async("find cats")
    assert bodies.searches == ["cats", "cats"]
    assert tool_messages(fake.requests[1]) == ["results for cats"]
    assert nodes(fakehub, "node.finished", "tool:search")[0]["output"] == "results for cats"


async def test_continue_at_a_tools_error_gate_gives_the_model_strands_own_error_result(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    bodies = Bodies(fail=ToolDown("the backend is down"))
    fake.script([FakeOpenAI.tool_call("search", {"q": "cats"}, call_id="call_1"), "done"])
    instrument_strands(session=gm)
    fakehub.set_debug(breakpoints=[("tool:search", "error")])
    fakehub.auto_answer("continue")
    await agent(fake, bodies).invoke_async("find cats")
    assert bodies.searches == ["cats"]
    assert tool_messages(fake.requests[1]) == ["Error: ToolDown - the backend is down"]
    assert "the backend is down" in str(nodes(fakehub, "node.error", "tool:search")[0]["error"])


async def test_abort_at_a_tool_ends_the_run_aborted_with_no_further_request(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    bodies = Bodies()
    fake.script([FakeOpenAI.tool_call("search", {"q": "cats"}, call_id="call_1"), "done"])
    instrument_strands(session=gm)
    fakehub.set_debug(breakpoints=[("tool:search", "before")])
    fakehub.auto_answer("abort")
    with pytest.raises(RunAborted):
        await agent(fake, bodies).invoke_async("find cats")
    assert bodies.searches == [] and fake.request_count == 1
    finished = fakehub.wait_event(lambda e: e.get("type") == "run.finished")
    assert finished["status"] == "aborted"


async def test_a_recorded_run_replays_with_no_provider_request_and_no_tool_body(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, tmp_path: Path
) -> None:
    bodies = Bodies()
    fake.script(
        [
            FakeOpenAI.tool_call("search", {"q": "cats"}, call_id="call_1"),
            FakeOpenAI.tool_call("weather", {"city": "Cairo"}, call_id="call_2"),
            "cats, and sunny in Cairo",
        ]
    )
    instrument_strands(session=gm)
    recorded = await agent(fake, bodies).invoke_async("find cats")
    nodes(fakehub, "node.finished", "llm:step")
    fakehub.wait_for(lambda: len(fakehub.of_type("node.finished")) == 5, what="the five nodes' ends")
    cassette = tmp_path / "run.jsonl"
    write_cassette(cassette, gm.client_id, list(fakehub.events))
    requests, searches, weathers = fake.request_count, len(bodies.searches), len(bodies.weathers)
    assert (requests, searches, weathers) == (3, 1, 1)

    replaying = graphmind.Client(
        app="replay", url=fakehub.url, retry_interval=0.2, replay={"source": cassette}
    )
    try:
        assert replaying.ready(5)
        instrument_strands(session=replaying)
        replayed = await agent(fake, bodies).invoke_async("find cats")
    finally:
        replaying.dispose()
    assert str(replayed) == str(recorded)
    assert fake.request_count == requests, "no provider request in the replay"
    assert (len(bodies.searches), len(bodies.weathers)) == (searches, weathers), "no tool body ran"
