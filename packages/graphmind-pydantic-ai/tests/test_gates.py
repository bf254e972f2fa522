"""The gates on a Pydantic AI agent beyond the shared matrix: what an injected reply does to the
run, an error gate on a tool, the run and its nesting, the framework's own flows left alone."""

from __future__ import annotations

from typing import Any

import pytest
from pa_helpers import ProviderError, ScriptedModel, Search, search_then_answer, tool_agent
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ModelRetry, RunContext
from pydantic_ai.exceptions import ApprovalRequired

import graphmind
from graphmind.testing import FakeHub
from graphmind_pydantic_ai import GraphmindCapability, instrument_pydantic_ai


def nodes(hub: FakeHub, event_type: str, node_id: str) -> list[dict[str, Any]]:
    hub.wait_for(lambda: any(e.get("type") == "run.finished" for e in hub.events), what="the run's end")
    return [e for e in hub.of_type(event_type) if e.get("nodeId") == node_id]


async def run(agent: Agent[Any, Any], mode: str, prompt: str = "find cats") -> Any:
    if mode == "stream":
        async with agent.run_stream(prompt) as result:
            return await result.get_output()
    return (await agent.run(prompt)).output


@pytest.mark.parametrize("mode", ["run", "stream"])
async def test_before_inject_on_a_model_request_never_calls_the_model_and_its_tool_call_runs_next(
    gm: graphmind.Client, fakehub: FakeHub, mode: str
) -> None:
    search, model = Search(), ScriptedModel([search_then_answer])
    agent = instrument_pydantic_ai(tool_agent(search, model), session=gm)
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    injected = {"tool_calls": [{"id": "call_dbg", "name": "search", "arguments": {"q": "dogs"}}]}
    answers = iter([("inject", injected), ("continue", None)])
    fakehub.auto_answer(lambda _paused: next(answers))

    assert await run(agent, mode) == "saw: results for dogs"
    assert model.calls == 1, "the injected step never reached the model; only the step after it did"
    assert search.seen == ["dogs"], "the agent called the injected tool with the injected arguments"
    tool = nodes(fakehub, "node.started", "tool:search")
    assert [t["instanceId"] for t in tool] == ["call_dbg"] and tool[0]["input"] == {"q": "dogs"}
    first = nodes(fakehub, "node.finished", "llm:step")[0]
    assert first["injected"] is True and first["output"]["tool_calls"][0]["arguments"] == {"q": "dogs"}


async def test_the_error_gate_on_a_tool_that_raises_retries_it_to_success(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    search = Search(fail=ProviderError("the backend is down"))
    agent = instrument_pydantic_ai(tool_agent(search, ScriptedModel([search_then_answer])), session=gm)
    fakehub.set_debug(breakpoints=[("tool:search", "error")])
    fakehub.auto_answer("retry")
    assert (await agent.run("find cats")).output == "saw: results for cats"
    assert search.calls == 2
    assert nodes(fakehub, "node.finished", "tool:search")[0]["output"] == "results for cats"


async def test_an_injected_tool_result_is_validated_against_the_tools_return_type(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    agent: Agent[None, str] = Agent(ScriptedModel([search_then_answer]).model, name="counter")
    bodies: list[str] = []

    @agent.tool_plain(name="search")
    def count(q: str) -> int:
        bodies.append(q)
        return 3

    instrument_pydantic_ai(agent, session=gm)
    fakehub.set_debug(breakpoints=[("tool:search", "before")])
    answers = iter([("inject", "not a number"), ("inject", 7)])
    fakehub.auto_answer(lambda _paused: next(answers))
    assert (await agent.run("count")).output == "saw: 7"
    assert bodies == []
    assert len(nodes(fakehub, "exec.paused", "tool:search")) == 2, "the refused value held the gate again"


async def test_the_run_is_named_after_the_agent_and_a_delegated_agent_nests_under_the_tool(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    inner = instrument_pydantic_ai(Agent(ScriptedModel(["inner answer"]).model, name="inner"), session=gm)
    outer: Agent[None, str] = Agent(ScriptedModel([search_then_answer]).model, name="outer")

    @outer.tool_plain(name="search")
    async def delegate(q: str) -> str:
        return (await inner.run(q)).output

    instrument_pydantic_ai(outer, session=gm)
    assert (await outer.run("go")).output == "saw: inner answer"
    fakehub.wait_for(lambda: bool(fakehub.of_type("run.finished")), what="the outer run's end")
    started = fakehub.of_type("run.started")
    assert [r["name"] for r in started] == ["outer"], "one run, the outer agent's; the inner joins it"
    tool = nodes(fakehub, "node.started", "tool:search")[0]
    steps = nodes(fakehub, "node.started", "llm:step")
    inner_steps = nodes(fakehub, "node.started", "llm:step@inner")  # another agent: its own node
    assert [s["agent"] for s in steps] == ["outer", "outer"] and tool["agent"] == "outer"
    assert [s["parentInstanceId"] for s in inner_steps] == [tool["instanceId"]]
    assert inner_steps[0]["agentPath"] == ["outer", "inner"]
    assert inner_steps[0]["input"]["messages"][-1]["content"] == "cats"
    assert {s["runId"] for s in steps + inner_steps} == {started[0]["runId"]}


async def test_output_validation_retries_are_visible_as_steps(gm: graphmind.Client, fakehub: FakeHub) -> None:
    agent: Agent[None, str] = Agent(ScriptedModel(["too short", "long enough now"]).model, name="v")

    @agent.output_validator
    def at_least_ten(output: str) -> str:
        if len(output) < 10:
            raise ModelRetry("say more")
        return output

    instrument_pydantic_ai(agent, session=gm)
    assert (await agent.run("hi")).output == "long enough now"
    steps = nodes(fakehub, "node.started", "llm:step")
    assert len(steps) == 2
    assert [s["instanceId"][-3:] for s in steps] == [":s1", ":s2"], "one invocation, two numbered steps"
    assert "say more" in steps[1]["input"]["messages"][-1]["content"]


async def test_a_tool_that_asks_for_approval_defers_exactly_as_without_graphmind(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    def build() -> tuple[Agent[None, Any], list[str]]:
        ran: list[str] = []
        agent: Agent[None, Any] = Agent(
            ScriptedModel([search_then_answer]).model, name="approve", output_type=[str, DeferredToolRequests]
        )

        @agent.tool(name="search")
        def guarded(ctx: RunContext[None], q: str) -> str:
            if not ctx.tool_call_approved:
                raise ApprovalRequired()
            ran.append(q)
            return f"results for {q}"

        return agent, ran

    fakehub.set_debug(pause_on_error="all")  # a control-flow exception must not open an error gate
    outputs = []
    for instrumented in (False, True):
        agent, ran = build()
        if instrumented:
            instrument_pydantic_ai(agent, session=gm)
        first = await agent.run("find cats")
        assert isinstance(first.output, DeferredToolRequests) and ran == []
        call_id = first.output.approvals[0].tool_call_id
        second = await agent.run(
            message_history=first.all_messages(),
            deferred_tool_results=DeferredToolResults(approvals={call_id: True}),
        )
        outputs.append((second.output, ran))
    assert outputs[0] == outputs[1] == ("saw: results for cats", ["cats"])
    fakehub.wait_for(lambda: len(fakehub.of_type("run.finished")) == 2, what="both instrumented runs' ends")
    assert fakehub.of_type("exec.paused") == []
    deferred = next(e for e in fakehub.of_type("node.finished") if e.get("nodeId") == "tool:search")
    assert deferred["output"]["controlFlow"] == "ApprovalRequired"


async def test_a_model_step_records_the_tools_offered_the_usage_and_streamed_tokens(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    agent = instrument_pydantic_ai(
        tool_agent(Search(), ScriptedModel([search_then_answer], chunk=3)), session=gm
    )
    async with agent.run_stream("find cats") as result:
        assert await result.get_output() == "saw: results for cats"
    step = nodes(fakehub, "node.started", "llm:step")[0]
    assert step["input"]["tools"] == ["search"] and step["attrs"]["model"] == "scripted"
    finished = nodes(fakehub, "node.finished", "llm:step")
    assert all(f["usage"]["totalTokens"] > 0 for f in finished)
    tokens = [e for e in fakehub.of_type("node.token") if e["instanceId"] == finished[-1]["instanceId"]]
    text = "".join(d["v"] for t in tokens for d in t["deltas"])
    assert text == "saw: results for cats"


async def test_an_agent_built_with_the_capability_and_instrumented_too_makes_one_node_per_call(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    model = ScriptedModel(["hello"])
    agent: Agent[None, str] = Agent(model.model, name="both", capabilities=[GraphmindCapability(session=gm)])
    instrument_pydantic_ai(agent, session=gm)
    assert (await agent.run("hi")).output == "hello"
    assert len(nodes(fakehub, "node.started", "llm:step")) == 1
    assert model.calls == 1


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
def test_under_trio_the_instrumented_agent_fails_as_the_bare_one_does(gm: graphmind.Client) -> None:
    """Pydantic AI runs on asyncio only (its run lifecycle starts an asyncio task,
    pydantic_ai/_utils.py:384 ScopedTask): under trio the bare agent raises, and GraphMind changes
    nothing about that (docs/pydantic-ai.md, "Async libraries")."""
    trio = pytest.importorskip("trio")
    errors = []
    for instrumented in (False, True):
        agent = tool_agent(Search(), ScriptedModel([search_then_answer]))
        if instrumented:
            instrument_pydantic_ai(agent, session=gm)

        async def main(agent: Agent[None, str] = agent) -> str:
            return (await agent.run("find cats")).output

        with pytest.raises(RuntimeError) as raised:
            trio.run(main)
        errors.append(str(raised.value))
    assert errors[0] == errors[1] == "no running event loop"


async def test_an_edited_tool_input_is_validated_by_the_tools_own_arguments_validator(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    search = Search()
    agent = instrument_pydantic_ai(tool_agent(search, ScriptedModel([search_then_answer])), session=gm)
    fakehub.set_debug(breakpoints=[("tool:search", "before")])
    answers = iter(
        [("continue", None, {"input": {"q": ["not", "text"]}}), ("continue", None, {"input": {"q": "dogs"}})]
    )
    paused: list[dict[str, Any]] = []

    def answer(frame: dict[str, Any]) -> Any:
        paused.append(frame)
        return next(answers)

    fakehub.auto_answer(answer)
    assert (await agent.run("find cats")).output == "saw: results for dogs"
    assert search.seen == ["dogs"]
    assert "q" in paused[1]["refused"] and "string" in paused[1]["refused"], paused[1].get("refused")


async def test_an_edited_model_request_reaches_the_model_as_its_own_messages(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    model = ScriptedModel(["ok"])
    agent = instrument_pydantic_ai(Agent(model.model, name="e", instructions="Be brief."), session=gm)
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    edited = {
        "messages": [
            {"role": "system", "content": "Be verbose."},
            {"role": "user", "content": "earlier"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c0", "name": "x", "arguments": {}}],
            },
            {"role": "tool", "name": "x", "tool_call_id": "c0", "content": "done"},
            {"role": "user", "content": "now"},
        ]
    }
    fakehub.auto_answer(lambda _frame: ("continue", None, {"input": edited}))
    assert (await agent.run("hi")).output == "ok"
    seen = model.seen[-1]
    kinds = [[p.part_kind for p in m.parts] for m in seen]
    assert kinds == [["system-prompt", "user-prompt"], ["tool-call"], ["tool-return", "user-prompt"]]
    assert seen[-1].parts[-1].content == "now"


async def test_a_recorded_agent_run_replays_with_no_model_call_and_no_tool_body(
    gm: graphmind.Client, fakehub: FakeHub, tmp_path: Any
) -> None:
    # graphmind record's format, from the FakeHub's events (graphmind.testing.write_cassette)
    from graphmind.testing import write_cassette

    search, model = Search(), ScriptedModel([search_then_answer])
    agent = instrument_pydantic_ai(tool_agent(search, model), session=gm)
    assert (await agent.run("find cats")).output == "saw: results for cats"
    fakehub.wait_for(lambda: bool(fakehub.of_type("run.finished")), what="the recorded run's end")
    path = tmp_path / "run.jsonl"
    write_cassette(path, gm.client_id, [dict(e) for e in fakehub.events])

    # fail, not hold (the default when attached): a divergence fails in a second, not at pytest's timeout
    replaying = graphmind.Client(
        app="replay", url=fakehub.url, retry_interval=0.2, replay={"source": path, "on_divergence": "fail"}
    )
    try:
        assert replaying.ready(5)
        search2, model2 = Search(), ScriptedModel([search_then_answer])
        again = instrument_pydantic_ai(tool_agent(search2, model2), session=replaying)
        assert (await again.run("find cats")).output == "saw: results for cats"
        assert model2.calls == 0 and search2.calls == 0, (
            "a replayed run reaches neither the model nor the tool"
        )
    finally:
        replaying.dispose()
    fakehub.wait_for(lambda: len(fakehub.of_type("run.finished")) == 2, what="the replayed run's end")
    replayed = [e for e in fakehub.of_type("node.finished") if e.get("replayed") is True]
    assert [e["nodeId"] for e in replayed] == ["llm:step", "tool:search", "llm:step"]
