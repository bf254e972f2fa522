"""The demo's printed summary counts how each node's calls ended, not only the latest one's."""

from __future__ import annotations

from typing import Any

from graphmind_server.demo.summary import node_lines


def ev(kind: str, node_id: str, instance: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "nodeId": node_id, "instanceId": instance, **fields}


def test_a_node_whose_first_two_calls_were_ok_and_the_third_aborted_says_so() -> None:
    events = [
        {"type": "run.started", "nodeId": "agent:trip", "instanceId": "r1", "runId": "r1"},
        ev("node.started", "tool:book", "c1"),
        ev("node.finished", "tool:book", "c1"),
        ev("node.started", "tool:book", "c2"),
        ev("node.finished", "tool:book", "c2", injected=True),
        ev("node.started", "tool:book", "c3"),
        ev("exec.paused", "tool:book", "c3", gate="before"),
        ev("exec.resumed", "tool:book", "c3", action="abort"),
        ev("node.error", "tool:book", "c3", error={"name": "RunAborted", "message": "aborted"}),
        {"type": "run.finished", "runId": "r1", "status": "aborted"},
    ]
    nodes = [
        {"nodeId": "agent:trip", "executions": 1, "status": "aborted"},
        {"nodeId": "tool:book", "executions": 3, "status": "aborted"},
    ]
    lines = node_lines(nodes, events, "aborted")
    assert lines == [
        f"  {'agent:trip':<22}  1 call: 1 aborted",
        f"  {'tool:book':<22}  3 calls: 1 ok, 1 injected, 1 aborted",
    ]
    assert not any("3 × aborted" in line for line in lines)


def test_an_abandoned_runs_open_call_shows_abandoned_and_a_node_without_events_keeps_the_hubs_word() -> None:
    events = [ev("node.started", "tool:search", "c1")]
    nodes = [
        {"nodeId": "tool:search", "executions": 1, "status": "running"},
        {"nodeId": "tool:book", "executions": 2, "status": "ok"},
    ]
    assert node_lines(nodes, events, "abandoned") == [
        f"  {'tool:search':<22}  1 call: 1 abandoned",
        f"  {'tool:book':<22}  2 calls: 2 ok",
    ]
