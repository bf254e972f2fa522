"""What an agent run looks like instrumented: its run, nodes and gates, on the SDK's own models
against the loopback fake provider (which counts requests) and an in-process hub (FakeHub)."""

from __future__ import annotations

from typing import Any

import pytest
from agents import (
    Agent,
    GuardrailFunctionOutput,
    InputGuardrailTripwireTriggered,
    Runner,
    UserError,
    input_guardrail,
)
from agents_helpers import PROMPT, REPLY, Tool, model_for, tool_outputs, tool_then_text

import graphmind
from graphmind import RunAborted
from graphmind.testing import FakeHub
from graphmind_openai.testing import FakeOpenAI
from graphmind_openai_agents import instrument_openai_agents, uninstrument_openai_agents


@pytest.fixture
def fake() -> Any:
    with FakeOpenAI(chunks=3, default_reply=tool_then_text) as provider:
        yield provider


@pytest.fixture
def on(gm: graphmind.Client) -> graphmind.Client:
    assert instrument_openai_agents(session=gm)
    return gm


def _agent(fake: FakeOpenAI, tool: Tool, api: str = "chat", **kw: Any) -> Agent[Any]:
    return Agent(
        name="planner", instructions="You plan trips.", tools=[tool.tool], model=model_for(fake, api), **kw
    )


def _ended(hub: FakeHub, node_id: str, count: int = 1) -> list[dict[str, Any]]:
    def ends() -> list[dict[str, Any]]:
        return [
            e
            for e in hub.events
            if e.get("nodeId") == node_id and e["type"] in ("node.finished", "node.error")
        ]

    hub.wait_for(lambda: len(ends()) >= count, what=f"{count} endings of {node_id}")
    return ends()


async def _run(agent: Agent[Any], streamed: bool) -> Any:
    if not streamed:
        return await Runner.run(agent, PROMPT)
    result = Runner.run_streamed(agent, PROMPT)
    async for _event in result.stream_events():
        pass
    return result


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
async def test_one_run_named_after_the_agent_with_a_model_step_a_tool_and_a_second_step(
    on: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, api: str, streamed: bool
) -> None:
    tool = Tool()
    result = await _run(_agent(fake, tool, api), streamed)
    assert result.final_output == REPLY and tool.calls == [{"to": "CAI"}]
    steps = _ended(fakehub, "llm:step", 2)
    (tool_end,) = _ended(fakehub, "tool:search_flights")
    runs = [e for e in fakehub.of_type("run.started") if not e.get("implicit")]
    assert [r["name"] for r in runs] == ["planner"]
    run_id = runs[0]["runId"]
    assert {e["runId"] for e in [*steps, tool_end]} == {run_id}
    first = next(e for e in fakehub.of_type("node.started") if e["nodeId"] == "llm:step")
    assert first["input"]["agent"] == "planner" and first["input"]["tools"] == ["search_flights"]
    assert first["input"]["messages"] == [{"role": "user", "content": PROMPT}]
    assert steps[0]["output"]["tool_calls"][0]["name"] == "search_flights"
    assert steps[1]["output"]["content"] == REPLY
    if not (streamed and api == "chat"):  # a streamed chat completion reports usage only when asked
        assert steps[0]["usage"]["inputTokens"] > 0
    # the tool node takes the id the model called it with (docs/protocol.md, "Tool node identity")
    call_id = steps[0]["output"]["tool_calls"][0]["id"]
    started = next(e for e in fakehub.of_type("node.started") if e["nodeId"] == "tool:search_flights")
    assert started["input"] == {"to": "CAI"} and started["attrs"]["callId"] == call_id
    assert tool_end["output"] == "3 flights to CAI"
    fakehub.wait_for(lambda: any(e["runId"] == run_id for e in fakehub.of_type("run.finished")))
    if streamed:
        tokens = [e for e in fakehub.of_type("node.token")]
        assert tokens, "a streamed model step sends its text deltas"


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
async def test_before_inject_on_the_model_makes_no_request_and_its_tool_call_is_called_next(
    on: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, streamed: bool
) -> None:
    injected = {
        "content": None,
        "tool_calls": [{"id": "call_gm", "name": "search_flights", "arguments": {"to": "LXR"}}],
    }
    answers = [("inject", injected)]
    fakehub.auto_answer(lambda frame: answers.pop(0) if answers else ("continue", None))
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    tool = Tool()
    result = await _run(_agent(fake, tool), streamed)
    assert tool.calls == [{"to": "LXR"}], "the agent called the injected tool call next"
    assert fake.request_count == 1, "the injected step made no request; the second step made one"
    assert tool_outputs(fake) == ["3 flights to LXR"]
    assert result.final_output == REPLY
    first = _ended(fakehub, "llm:step", 2)[0]
    assert first["injected"] is True


async def test_a_handoff_is_a_node_between_the_two_agents_steps(
    on: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    model = model_for(fake)
    guide = Agent(name="guide", instructions="You guide tours.", model=model)
    triage = Agent(name="triage", instructions="Route the request.", handoffs=[guide], model=model)
    fake.default_reply = REPLY
    fake.script([FakeOpenAI.tool_call("transfer_to_guide", {})])
    result = await Runner.run(triage, PROMPT)
    assert result.final_output == REPLY and result.last_agent is guide
    (handoff,) = _ended(fakehub, "handoff:triage->guide")
    assert handoff["type"] == "node.finished" and handoff["output"]["input"][0]["content"] == PROMPT
    started = next(e for e in fakehub.of_type("node.started") if e["nodeId"] == "handoff:triage->guide")
    assert started["attrs"]["from"] == "triage" and started["attrs"]["to"] == "guide"
    assert started["kind"] == "handoff" and started["agent"] == "triage"
    assert len(_ended(fakehub, "llm:step")) == 1
    assert len(_ended(fakehub, "llm:step@guide")) == 1
    agents = [e["agentPath"] for e in fakehub.of_type("node.started") if e["kind"] == "llm"]
    assert agents == [["triage"], ["triage", "guide"]]


async def test_a_guardrail_is_a_node_and_its_tripwire_shows(
    on: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    @input_guardrail
    def no_cairo(ctx: Any, agent: Any, input: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(
            output_info={"why": "no Cairo"}, tripwire_triggered="Cairo" in str(input)
        )

    agent = _agent(fake, Tool(), input_guardrails=[no_cairo])
    with pytest.raises(InputGuardrailTripwireTriggered):
        await Runner.run(agent, PROMPT)
    (end,) = _ended(fakehub, "guardrail:no_cairo")
    assert (
        end["output"] == {"tripwireTriggered": True, "info": {"why": "no Cairo"}} and end["ungated"] is True
    )


async def test_retry_at_a_tools_error_gate_runs_the_tool_again(
    on: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    """A @function_tool catches its own error (the SDK's failure_error_function): the error gate
    still sees the exception, and retry runs the body again."""
    fakehub.set_debug(breakpoints=[("tool:search_flights", "error")])
    fakehub.auto_answer("retry")
    tool = Tool()
    tool.fail = 1
    result = await Runner.run(_agent(fake, tool), PROMPT)
    assert result.final_output == REPLY and len(tool.calls) == 2
    assert tool_outputs(fake) == ["3 flights to CAI"]
    (end,) = _ended(fakehub, "tool:search_flights")
    assert end["type"] == "node.finished"


async def test_continue_at_a_tools_error_gate_is_the_sdks_own_failure_handling(
    on: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    uninstrument_openai_agents()
    bare = Tool()
    bare.fail = 1
    await Runner.run(_agent(fake, bare), PROMPT)
    (bare_sent,) = tool_outputs(fake)
    fake.requests.clear()
    assert instrument_openai_agents(session=on)
    fakehub.set_debug(breakpoints=[("tool:search_flights", "error")])
    fakehub.auto_answer("continue")
    tool = Tool()
    tool.fail = 1
    result = await Runner.run(_agent(fake, tool), PROMPT)
    assert result.final_output == REPLY and len(tool.calls) == 1, "the body does not run again"
    assert tool_outputs(fake) == [bare_sent], (
        "the model got the SDK's own error message, as without GraphMind"
    )
    (end,) = _ended(fakehub, "tool:search_flights")
    assert end["type"] == "node.error"


async def test_continue_at_the_error_gate_of_a_tool_without_failure_handler_raises_the_sdks_error_from_the_very_exception(
    on: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    fakehub.set_debug(breakpoints=[("tool:search_flights", "error")])
    fakehub.auto_answer("continue")
    tool = Tool(failure_error_function=None)
    tool.fail = 1
    with pytest.raises(UserError) as caught:
        await Runner.run(_agent(fake, tool), PROMPT)
    assert caught.value.__cause__ is tool.raised


async def test_inject_at_a_tools_after_gate_is_what_the_model_is_sent(
    on: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    fakehub.set_debug(breakpoints=[("tool:search_flights", "after")])
    fakehub.auto_answer("inject", {"flights": 2})
    tool = Tool()
    await Runner.run(_agent(fake, tool), PROMPT)
    assert tool_outputs(fake) == [str({"flights": 2})], "as for a tool that returned the dict (str() of it)"


@pytest.mark.parametrize("where", ["llm:step", "tool:search_flights"])
async def test_abort_ends_the_run_with_run_aborted(
    on: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, where: str
) -> None:
    """The SDK raises a tool's exception as its UserError; an abort reaches the app as RunAborted
    itself (the run wrapper takes it out of the SDK's error), and the run is marked aborted."""
    fakehub.set_debug(breakpoints=[(where, "before")])
    fakehub.auto_answer("abort")
    tool = Tool()
    with pytest.raises(RunAborted):
        await Runner.run(_agent(fake, tool), PROMPT)
    assert tool.calls == []
    fakehub.wait_for(lambda: bool(fakehub.of_type("run.finished")))
    (finished,) = [
        e
        for e in fakehub.of_type("run.finished")
        if e["runId"] != fakehub.of_type("run.started")[0].get("implicit")
    ]
    assert finished["status"] == "aborted"


async def test_an_agent_as_tool_runs_nested_in_its_tool_node(
    on: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    fake.default_reply = REPLY
    inner = Agent(name="researcher", instructions="Research.", model=model_for(fake))
    outer = Agent(
        name="planner",
        instructions="Plan.",
        tools=[inner.as_tool(tool_name="research", tool_description="Research a city.")],
        model=model_for(fake),
    )
    fake.script([FakeOpenAI.tool_call("research", {"input": "Cairo"})])
    result = await Runner.run(outer, PROMPT)
    assert result.final_output == REPLY
    (tool_end,) = _ended(fakehub, "tool:research")
    steps = _ended(fakehub, "llm:step", 2)
    assert len(_ended(fakehub, "llm:step@researcher")) == 1  # another agent: a node of its own
    runs = [e for e in fakehub.of_type("run.started") if not e.get("implicit")]
    assert [r["name"] for r in runs] == ["planner"], "the nested run is no run of its own"
    tool_instance = tool_end["instanceId"]
    inner = next(e for e in fakehub.of_type("node.started") if e["nodeId"] == "llm:step@researcher")
    assert inner["parentInstanceId"] == tool_instance, "the researcher's model step nests in the tool node"
    assert inner["agentPath"] == ["planner", "researcher"]
    assert len(steps) == 2


async def test_a_stream_the_run_loop_closes_is_closed_in_the_run_loops_task(on: graphmind.Client) -> None:
    """As the SDK's own test_streamed_terminal_failure_closes_the_model_stream: a terminal failure
    event leaves the loop, which closes the model stream itself; through our wrapper too."""
    import asyncio
    from collections.abc import AsyncIterator

    from agents import ModelBehaviorError
    from agents.models.interface import Model
    from openai.types.responses import ResponseErrorEvent

    tasks: dict[str, Any] = {}

    class Failing(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            tasks["iterating"] = asyncio.current_task()
            try:
                yield ResponseErrorEvent(
                    type="error", code="x", message="boom", param=None, sequence_number=0
                )
            finally:
                tasks["closing"] = asyncio.current_task()

    result = Runner.run_streamed(Agent(name="test", model=Failing()), "test")
    with pytest.raises(ModelBehaviorError):
        async for _ in result.stream_events():
            pass
    assert tasks.get("closing") is not None and tasks["closing"] is tasks["iterating"]


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
async def test_a_recorded_run_replays_with_no_provider_request_and_no_tool_body(
    fakehub: FakeHub, fake: FakeOpenAI, api: str, streamed: bool, tmp_path: Any
) -> None:
    # Issue 34: a whole agent run (model step, tool, model step) recorded, then run again from the
    # cassette: the fake provider counts no request and the tool's body never runs.
    from graphmind.testing import write_cassette

    recording = graphmind.Client(app="agents-replay", url=fakehub.url)
    assert recording.ready(5)
    assert instrument_openai_agents(session=recording)
    tool = Tool()
    first = await _run(_agent(fake, tool, api), streamed)
    uninstrument_openai_agents()
    sent = recording.stats()["events"]
    fakehub.wait_for(lambda: len(fakehub.events) >= sent, what="every event at the hub")
    recording.dispose()
    cassette = tmp_path / "agent.jsonl"
    write_cassette(cassette, recording.client_id, list(fakehub.events))
    fakehub.events.clear()
    requests, calls = fake.request_count, list(tool.calls)

    # fail, not hold (the default when attached): a divergence fails this test in a second instead
    # of holding the run until pytest's timeout
    replaying = graphmind.Client(
        app="agents-replay", url=fakehub.url, replay={"source": cassette, "on_divergence": "fail"}
    )
    try:
        assert replaying.ready(5)
        assert instrument_openai_agents(session=replaying)
        again = await _run(_agent(fake, tool, api), streamed)
        assert again.final_output == first.final_output == REPLY
        assert fake.request_count == requests, "no provider request while replaying"
        assert tool.calls == calls, "no tool body ran"
        ends = _ended(fakehub, "llm:step", 2) + _ended(fakehub, "tool:search_flights")
        assert all(e.get("replayed") is True for e in ends), ends
        started = [e for e in fakehub.of_type("run.started") if not e.get("implicit")]
        assert started and all(r.get("replayOf") for r in started)
    finally:
        uninstrument_openai_agents()
        replaying.dispose()
