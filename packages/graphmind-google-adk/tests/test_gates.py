"""The issue's acceptance lines on ADK's own runner, each on FakeHub and on the real hub process
(`kit_hub`): a scripted `BaseLlm`, FunctionTools that count their calls, ADK's own types."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from adk_helpers import (
    Counter,
    ScriptedLlm,
    agent,
    call_response,
    collect,
    final_text,
    last_tool_result,
    reply_script,
    run_async,
    runner,
    text_response,
    tool_results,
    tool_script,
)
from google.adk.agents import LoopAgent, ParallelAgent, SequentialAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse

import graphmind
from graphmind import protocol as proto
from graphmind.testing import FakeHub
from graphmind.testing.gate_matrix import Hub
from graphmind_google_adk import GraphmindPlugin, instrument_runner


@contextmanager
def attached(kit_hub: Callable[[], Hub] | None) -> Iterator[tuple[Hub, graphmind.Client]]:
    with (kit_hub or (lambda: FakeHub(pause_on_error="off")))() as hub:
        client = graphmind.Client(app="adk-tests", url=hub.url, retry_interval=0.2)
        try:
            assert client.ready(5)
            yield hub, client
        finally:
            client.dispose()


def answer_in_order(hub: Hub, *answers: tuple[str, Any]) -> None:
    pending = list(answers)
    hub.auto_answer(lambda _frame: pending.pop(0) if pending else (proto.CONTINUE, None))


def started(hub: Hub, node_id: str) -> list[dict[str, Any]]:
    return [e for e in hub.of_type(proto.NODE_STARTED) if e["nodeId"] == node_id]


def wait_finished(hub: Hub, node_id: str, count: int = 1) -> list[dict[str, Any]]:
    def done() -> list[dict[str, Any]]:
        return [
            e
            for e in hub.events
            if e.get("nodeId") == node_id and e.get("type") in (proto.NODE_FINISHED, proto.NODE_ERROR)
        ]

    hub.wait_for(lambda: len(done()) >= count, what=f"{count} endings of {node_id}")
    return done()


async def test_before_inject_on_a_tool_never_runs_its_body_and_the_agent_goes_on_with_the_dict(
    kit_hub: Any,
) -> None:
    tools, model = Counter(), ScriptedLlm(script=tool_script("add", {"a": 1, "b": 2}))
    with attached(kit_hub) as (hub, client):
        r = instrument_runner(runner(agent(model, [tools.add])), session=client)
        answer_in_order(hub, (proto.INJECT, {"sum": 99, "note": "from the debugger"}))
        hub.set_debug(breakpoints=[("tool:add", proto.BEFORE)])
        events = await collect(r)
        assert tools.calls.get("add", 0) == 0, "the tool body ran"
        assert tool_results(events) == [{"sum": 99, "note": "from the debugger"}]
        # the model's next request carries the injected dict as the tool's response
        assert last_tool_result(model.requests[-1]) == {"sum": 99, "note": "from the debugger"}
        assert model.calls == 2 and final_text(events) == "result: {'sum': 99, 'note': 'from the debugger'}"
        (end,) = wait_finished(hub, "tool:add")
        assert end["type"] == proto.NODE_FINISHED and end["injected"] is True
        assert end["instanceId"] == "call-1"  # the function-call id


async def test_an_injected_function_call_steers_the_agent_to_that_tool(kit_hub: Any) -> None:
    tools = Counter()

    def script(request: LlmRequest) -> list[LlmResponse]:
        result = last_tool_result(request)
        return [text_response("no tool needed" if result is None else f"sky: {result['sky']}")]

    model = ScriptedLlm(script=script)
    with attached(kit_hub) as (hub, client):
        r = instrument_runner(runner(agent(model, [tools.add, tools.weather])), session=client)
        steer = {
            "content": None,
            "tool_calls": [{"id": "steer-1", "name": "weather", "arguments": {"city": "Cairo"}}],
        }
        answer_in_order(hub, (proto.INJECT, steer))
        hub.set_debug(breakpoints=[("llm:step", proto.BEFORE)])
        events = await collect(r)
        assert model.calls == 1, "the injected step makes no model call; the step after the tool does"
        assert tools.calls == {"weather": 1}
        assert tool_results(events) == [{"city": "Cairo", "sky": "clear"}]
        assert final_text(events) == "sky: clear"
        (tool,) = wait_finished(hub, "tool:weather")
        assert tool["instanceId"] == "steer-1" and tool["output"] == {"city": "Cairo", "sky": "clear"}
        (start,) = started(hub, "tool:weather")
        assert start["input"] == {"city": "Cairo"}


async def test_retry_at_the_error_gate_runs_the_tool_again_and_continue_reraises_adks_error(
    kit_hub: Any,
) -> None:
    tools, model = Counter(), ScriptedLlm(script=tool_script("add", {"a": 2, "b": 3}))
    with attached(kit_hub) as (hub, client):
        r = instrument_runner(runner(agent(model, [tools.add])), session=client)
        tools.fail = 1
        answer_in_order(hub, (proto.RETRY, None))
        hub.set_debug(breakpoints=[("tool:add", proto.ERROR_GATE)])
        events = await collect(r)
        assert tools.calls["add"] == 2 and tool_results(events) == [{"sum": 5}]
        (end,) = wait_finished(hub, "tool:add")
        assert end["type"] == proto.NODE_FINISHED and end["output"] == {"sum": 5}


async def test_a_retry_at_the_models_after_gate_runs_the_same_request_again(kit_hub: Any) -> None:
    replies = iter(["first", "second"])
    model = ScriptedLlm(script=lambda _r: [text_response(next(replies))])
    with attached(kit_hub) as (hub, client):
        r = instrument_runner(runner(agent(model)), session=client)
        answer_in_order(hub, (proto.RETRY, None), (proto.CONTINUE, None))
        hub.set_debug(breakpoints=[("llm:step", proto.AFTER)])
        events = await collect(r)
        assert model.calls == 2 and final_text(events) == "second"
        assert model.requests[0] is model.requests[1]  # the very LlmRequest ADK built
        (end,) = wait_finished(hub, "llm:step")
        assert end["output"]["content"] == "second"


async def test_sub_agents_and_workflow_agents_appear_nested(kit_hub: Any) -> None:
    tools = Counter()
    adder = agent(ScriptedLlm(script=tool_script("add", {"a": 1, "b": 1})), [tools.add], name="adder")
    poet = agent(ScriptedLlm(script=reply_script("a short poem")), name="poet")
    critic = agent(ScriptedLlm(script=reply_script("fine")), name="critic")
    looped = agent(ScriptedLlm(script=reply_script("again")), name="looped")
    root = SequentialAgent(
        name="pipeline",
        sub_agents=[
            adder,
            ParallelAgent(name="fanout", sub_agents=[poet, critic]),
            LoopAgent(name="loop", sub_agents=[looped], max_iterations=2),
        ],
    )
    with attached(kit_hub) as (hub, client):
        await collect(instrument_runner(runner(root), session=client))
        wait_finished(hub, "agent:pipeline")
        nodes = {e["instanceId"]: e for e in hub.of_type(proto.NODE_STARTED)}
        by_id: dict[str, list[dict[str, Any]]] = {}
        for e in nodes.values():
            by_id.setdefault(e["nodeId"], []).append(e)

        def parent(node_id: str) -> set[str]:
            return {
                nodes[e["parentInstanceId"]]["nodeId"]
                for e in by_id[node_id]
                if e["parentInstanceId"] in nodes
            }

        (pipeline,) = by_id["agent:pipeline"]
        assert pipeline["parentInstanceId"] == pipeline["runId"]
        assert parent("agent:adder") == parent("agent:fanout") == parent("agent:loop") == {"agent:pipeline"}
        assert parent("agent:poet") == parent("agent:critic") == {"agent:fanout"}
        assert parent("agent:looped") == {"agent:loop"} and len(by_id["agent:looped"]) == 2
        assert parent("tool:add") == {"agent:adder"}
        llm = [e for e in nodes.values() if e["kind"] == "llm"]
        steps = {nodes[e["parentInstanceId"]]["name"] for e in llm}
        assert steps == {"adder", "poet", "critic", "looped"}
        # each sub-agent's model steps are its own logical node (the root, `pipeline`, has none)
        assert {e["nodeId"] for e in llm} == {f"llm:step@{name}" for name in steps}
        assert len({e["runId"] for e in nodes.values()}) == 1  # the invocation is one run


async def test_a_streamed_reply_sends_its_tokens_and_the_usage_is_recorded(kit_hub: Any) -> None:
    def script(_request: LlmRequest) -> list[LlmResponse]:
        whole = text_response("hello there")
        whole.usage_metadata = whole_usage()
        return [text_response("hello ", True), text_response("there", True), whole]

    model = ScriptedLlm(script=script)
    with attached(kit_hub) as (hub, client):
        r = instrument_runner(runner(agent(model)), session=client)
        events = [e async for e in run_async(r, stream=True)]
        assert [e.partial for e in events][:2] == [True, True]
        (end,) = wait_finished(hub, "llm:step")
        assert end["usage"] == {"inputTokens": 7, "outputTokens": 2, "totalTokens": 9}
        streamed = "".join(
            d["v"] for e in hub.of_type(proto.NODE_TOKEN) if e["nodeId"] == "llm:step" for d in e["deltas"]
        )
        assert streamed == "hello there"
        (start,) = started(hub, "llm:step")
        assert start["input"]["messages"] == [
            {"role": "system", "content": start["input"]["messages"][0]["content"]},
            {"role": "user", "content": "hello"},
        ]
        assert start["input"]["agent"] == "assistant"


def whole_usage() -> Any:
    from google.genai import types

    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=7, candidates_token_count=2, total_token_count=9
    )


async def test_a_plugin_given_to_the_app_aborts_with_run_aborted_itself(fakehub: FakeHub) -> None:
    """`App(plugins=[GraphmindPlugin()])`, no instrument_runner: the plugin lets its abort out of
    ADK's plugin manager as `RunAborted` (ADK wraps a plugin's exception in RuntimeError)."""
    model = ScriptedLlm(script=reply_script())
    client = graphmind.Client(app="adk-tests", url=fakehub.url, retry_interval=0.2)
    try:
        assert client.ready(5)
        r = runner(agent(model), plugins=[GraphmindPlugin(client)])
        fakehub.auto_answer(proto.ABORT)
        fakehub.set_debug(breakpoints=[("llm:step", proto.BEFORE)])
        with pytest.raises(graphmind.RunAborted):
            await collect(r)
        assert model.calls == 0
    finally:
        client.dispose()


async def test_a_disabled_plugin_changes_nothing() -> None:
    client = graphmind.Client(app="adk-tests", enabled=False)
    try:
        tools = Counter()
        bare_model = ScriptedLlm(script=tool_script("add", {"a": 1, "b": 2}))
        bare = await collect(runner(agent(bare_model, [tools.add])))
        model = ScriptedLlm(script=tool_script("add", {"a": 1, "b": 2}))
        events = await collect(runner(agent(model, [tools.add]), plugins=[GraphmindPlugin(client)]))
        assert [(e.author, e.content) for e in events] == [(e.author, e.content) for e in bare]
        assert tools.calls == {"add": 2}
    finally:
        client.dispose()


def test_the_call_response_helper_keeps_its_id() -> None:
    assert call_response("add", {}, "x").content.parts[0].function_call.id == "x"  # type: ignore[union-attr,index]
