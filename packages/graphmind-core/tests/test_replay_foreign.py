"""A foreign trace's comparison form (graphmind/_replay/foreign.py): what an instrumentor recorded
matches what an adapter describes for the same call, and what a trace lacks is named."""

from __future__ import annotations

from typing import Any

from graphmind._replay import foreign
from graphmind._replay.cassette import Cassette
from graphmind._replay.match import Matcher

OPENINFERENCE = {
    "model": "gpt-4o-mini-2024-07-18",
    "tools": ["get_weather"],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Cairo?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": '{"city": "Cairo"}'}],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "call_1"},
    ],
}
LANGCHAIN = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "human", "content": [{"type": "text", "text": "Weather in Cairo?"}]},
        {
            "role": "ai",
            "content": "",
            "tool_calls": [{"name": "get_weather", "args": {"city": "Cairo"}, "id": "x"}],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "x"},
    ]
}
RESPONSES = {
    "model": "gpt-4o",
    "instructions": "Be brief.",
    "input": [
        {"role": "user", "content": "Weather in Cairo?"},
        {"type": "function_call", "name": "get_weather", "arguments": '{"city":"Cairo"}', "call_id": "c"},
        {"type": "function_call_output", "call_id": "c", "output": "sunny"},
    ],
}


def test_an_openinference_request_matches_what_langchain_and_responses_adapters_describe() -> None:
    m = Matcher(foreign=True)
    assert m.same(OPENINFERENCE, LANGCHAIN, "llm")
    assert m.same(OPENINFERENCE, RESPONSES, "llm")
    changed: dict[str, Any] = {"messages": [*LANGCHAIN["messages"][:3], {"role": "tool", "content": "rain"}]}
    assert not m.same(OPENINFERENCE, changed, "llm")
    assert '-      "text": "sunny"' in m.diff(OPENINFERENCE, changed, "llm")
    assert not Matcher().same(OPENINFERENCE, LANGCHAIN, "llm"), "a GraphMind recording compares as it is"


def test_a_bare_recorded_tool_value_matches_a_one_argument_call() -> None:
    m = Matcher(foreign=True)
    assert m.same("Cairo", {"city": "Cairo"}, "tool")
    assert not m.same("Cairo", {"city": "Luxor"}, "tool")
    assert not m.same("Cairo", {"city": "Cairo", "days": 2}, "tool")
    assert m.same('{"celsius": 31}', {"celsius": 31}, "tool")


def test_what_a_trace_lacks_is_named() -> None:
    assert "no input messages" in (foreign.missing_input("llm", {"model": "m"}) or "")
    cut = {"messages": [{"role": "assistant", "tool_calls": [{"name": "book", "arguments": '{"seat": "1'}]}]}
    assert "truncated attribute" in (foreign.missing_input("llm", cut) or "")
    assert foreign.missing_input("llm", OPENINFERENCE) is None
    assert "no output message" in (foreign.missing_output("llm", None, False) or "")
    assert "no output for this tool call" in (foreign.missing_output("tool", None, False) or "")
    assert foreign.missing_output("tool", None, True) is None
    assert foreign.reply("llm", {"role": "model", "content": "hi"}) == {"role": "assistant", "content": "hi"}


def _started(node: str, span: str, ts: float, seq: int) -> dict[str, Any]:
    return {
        "type": "node.started",
        "runId": "otlp-1",
        "nodeId": node,
        "kind": node.split(":")[0],
        "instanceId": span,
        "ts": ts,
        "seq": seq,
        "input": {"messages": []},
    }


def test_a_foreign_cassette_counts_calls_in_start_order_whatever_order_they_arrived_in() -> None:
    events = [  # spans reach the hub as they end: the second step's ended first, the run's last
        _started("llm:step@billing", "b", 20.0, 1),
        {
            "type": "node.finished",
            "runId": "otlp-1",
            "instanceId": "b",
            "output": {"content": "two"},
            "seq": 2,
        },
        _started("llm:step", "a", 10.0, 3),
        {"type": "node.finished", "runId": "otlp-1", "instanceId": "a", "seq": 4},
        {"type": "run.started", "runId": "otlp-1", "meta": {"otlp": {"traceId": "1"}}, "seq": 5},
    ]
    cassette = Cassette.from_events(events)
    assert cassette.foreign and cassette.run_id == "otlp-1"
    first, second = cassette.get("llm:step", 1), cassette.get("llm:step", 2)
    assert first is not None and first.instance_id == "a" and first.lacking is not None
    assert second is not None and second.instance_id == "b" and second.lacking is None
