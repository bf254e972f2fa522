"""`graphmind.adapter`: the module adapter authors build on, and the one model-reply shape."""

from __future__ import annotations

import json

import pytest

import graphmind
from graphmind.adapter import Engine, ModelReply, NodeSpec, ToolCallReply, engine_for, parse_model_reply
from graphmind.testing import FakeHub


def test_a_string_is_the_reply_text() -> None:
    assert parse_model_reply("Paris.") == ModelReply("Paris.", [])


@pytest.mark.parametrize("key", ["arguments", "args"])
@pytest.mark.parametrize("encode", [False, True], ids=["object", "json-text"])
def test_tool_calls_take_arguments_or_args_as_an_object_or_json_text(key: str, encode: bool) -> None:
    args = {"to": "CAI", "days": 3}
    value = {
        "content": None,
        "tool_calls": [{"id": "call_1", "name": "search", key: json.dumps(args) if encode else args}],
    }
    assert parse_model_reply(value) == ModelReply(None, [ToolCallReply("call_1", "search", args)])


def test_a_tool_call_without_an_id_gets_a_generated_call_id() -> None:
    first, second = parse_model_reply(
        {"tool_calls": [{"name": "a"}, {"name": "b", "arguments": "{}"}]}
    ).tool_calls
    assert first.id.startswith("call_") and second.id.startswith("call_") and first.id != second.id
    assert first.arguments == {} and second.arguments == {}


def test_openai_own_tool_call_shape_and_an_assistant_role_are_read_too() -> None:
    value = {
        "role": "assistant",
        "content": "looking",
        "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}],
    }
    assert parse_model_reply(value) == ModelReply("looking", [ToolCallReply("c9", "f", {"x": 1})])
    assert parse_model_reply(value).to_json() == {
        "content": "looking",
        "tool_calls": [{"id": "c9", "name": "f", "arguments": {"x": 1}}],
    }


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (42, "got a int"),
        (None, "got a NoneType"),
        ({}, "give content, tool_calls or both"),
        ({"content": 3}, "content is a int"),
        ({"text": "hi"}, "unknown keys ['text']"),
        ({"role": "user", "content": "hi"}, "role is assistant"),
        ({"tool_calls": {"name": "x"}}, "tool_calls is a list"),
        ({"tool_calls": ["search"]}, "tool call 0 is a str"),
        ({"tool_calls": [{"arguments": {}}]}, "tool call 0 needs a name"),
        ({"tool_calls": [{"name": "f", "arguments": "[1]"}]}, "arguments is a list, not an object"),
        ({"tool_calls": [{"name": "f", "arguments": "{oops"}]}, "not valid JSON"),
        ({"tool_calls": [{"name": "f", "arguments": {}, "args": {}}]}, "both arguments and args"),
        ({"tool_calls": [{"name": "f", "id": 7}]}, "id is a string"),
        ({"tool_calls": [{"name": "f", "extra": 1}]}, "unknown keys ['extra']"),
    ],
)
def test_anything_else_is_a_value_error_that_names_the_accepted_shape(value: object, says: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_model_reply(value)
    assert says in str(info.value)
    assert "a model reply is a string" in str(info.value)


def test_engine_for_is_one_engine_per_client_and_the_default_client_when_none() -> None:
    client = graphmind.Client(app="t", enabled=False)
    engine = engine_for(client)
    assert isinstance(engine, Engine) and engine_for(client) is engine
    assert engine.enabled is False and engine.live is False
    assert engine_for(None) is engine_for(graphmind.get_client())


def test_dispose_turns_the_engine_and_its_open_nodes_off_at_once() -> None:
    """One liveness flag (NodeHost.live): the client clears it on dispose; the engine and every
    node read it, so a call after dispose runs straight through and a late token is not sent."""
    client = graphmind.Client(app="t", url="ws://127.0.0.1:9/ingest", retry_interval=60)
    engine = engine_for(client)
    assert engine.live is True
    node = engine.start_node(NodeSpec("f"))
    client.dispose()  # ends the implicit run: its run.finished is the last event
    emitted = client.stats()["events"]
    assert engine.live is False
    node.token("late")
    node.flush_tokens()
    assert not node._deltas and client.stats()["events"] == emitted
    sentinel = object()
    assert engine.execute(NodeSpec("g"), lambda: sentinel) is sentinel
    assert client.stats()["events"] == emitted


def test_a_disabled_engine_runs_the_call_as_it_is() -> None:
    engine = engine_for(graphmind.Client(app="t", enabled=False))
    sentinel = object()
    assert engine.execute(NodeSpec("f"), lambda: sentinel) is sentinel
    assert engine.current_run() is None


def test_the_engine_drives_nodes_runs_steps_and_hints(hub: FakeHub, client: graphmind.Client) -> None:
    engine = engine_for(client)
    run = engine.begin_run("flow")
    step = engine.next_llm_step("system: be brief", 1)
    assert step.first_step
    engine.hint([{"nodeId": "tool:search", "kind": "tool", "name": "search"}], run=run)
    ex = engine.start_node(
        NodeSpec("step", "llm", {"q": 1}, node_id="llm:step", instance_id=step.instance_id), run=run
    )
    ex.finish({"content": "ok"})
    engine.end_run(run)
    assert engine.new_instance_id() != engine.new_instance_id()
    finished = hub.wait_event(lambda e: e["type"] == "run.finished" and e["runId"] == run.run_id)
    assert finished["status"] == "finished"
    assert [e["type"] for e in hub.events if e.get("runId") == run.run_id] == [
        "run.started",
        "graph.hint",
        "node.started",
        "node.finished",
        "run.finished",
    ]


async def test_the_async_engine_executes_a_node(hub: FakeHub, client: graphmind.Client) -> None:
    engine = engine_for(client)

    async def call() -> str:
        return "real"

    hub.set_debug(breakpoints=[("llm:step", "before")])
    hub.auto_answer("inject", "from the debugger")
    result = await engine.aexecute(
        NodeSpec("step", "llm", node_id="llm:step"), call, from_injected=parse_model_reply
    )
    assert result == ModelReply("from the debugger", [])


def test_a_recorded_model_output_reads_as_a_reply_its_descriptive_keys_taken() -> None:
    """What adapters record for a model step (finish_reason, model, …) injects as it was shown:
    a replay hands the recorded output back through the same conversion (docs/replay.md)."""
    recorded = {"content": "Paris.", "tool_calls": [], "finish_reason": "stop", "model": "gpt-test"}
    assert parse_model_reply(recorded) == ModelReply("Paris.", [])
    anthropic = {"content": "Hi", "stop_reason": "end_turn", "stop_sequence": None, "model": "claude"}
    assert parse_model_reply(anthropic).content == "Hi"
