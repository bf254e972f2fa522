"""Synthetic runs as an app would send them (docs/protocol.md), for the large-run tests."""

from __future__ import annotations

from typing import Any

TOOLS = ["search", "read_page", "summarise", "calculator", "weather"]


def synthetic_events(
    run_id: str, total: int, *, name: str = "big", t0: float = 1.7e12, tools: list[str] = TOOLS
) -> list[dict[str, Any]]:
    """About `total` events of one run: model steps with streamed tokens, then a tool call, repeated."""
    events: list[dict[str, Any]] = []
    ts = t0

    def add(ev: dict[str, Any]) -> None:
        nonlocal ts
        ts += 3.0
        events.append({"seq": len(events) + 1, "ts": ts, "runId": run_id, **ev})

    add(
        {
            "type": "run.started",
            "name": name,
            "app": "bench",
            "nodeId": f"agent:{name}",
            "instanceId": run_id,
            "kind": "agent",
            "meta": {},
            "implicit": False,
        }
    )
    add({"type": "graph.hint", "nodes": [{"nodeId": f"tool:{t}", "kind": "tool", "name": t} for t in tools]})
    step = 0
    while len(events) < total - 1:
        step += 1
        llm = {"nodeId": "llm:step", "instanceId": f"inv1:s{step}", "kind": "llm", "name": "step"}
        add(
            {
                "type": "node.started",
                **llm,
                "parentInstanceId": run_id,
                "input": {"messages": [{"role": "user", "content": f"question {step}"}]},
                "attrs": {"model": "fake-1"},
            }
        )
        for k in range(3):
            add(
                {
                    "type": "node.token",
                    **{k2: llm[k2] for k2 in ("nodeId", "instanceId")},
                    "deltas": [{"t": "text", "v": f"tok{k} "}],
                }
            )
        add(
            {
                "type": "node.finished",
                **llm,
                "output": {"text": "tok0 tok1 tok2", "toolCalls": 1},
                "durationMs": 9.0,
                "heldMs": 0,
                "usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15},
            }
        )
        tool = tools[step % (len(tools) - 1)]  # the last tool is offered but never runs
        call = {"nodeId": f"tool:{tool}", "instanceId": f"call_{step}", "kind": "tool", "name": tool}
        add({"type": "node.started", **call, "parentInstanceId": run_id, "input": {"q": f"query {step}"}})
        add(
            {
                "type": "node.finished",
                **call,
                "output": {"result": f"answer {step}"},
                "durationMs": 3.0,
                "heldMs": 0,
            }
        )
    add({"type": "run.finished", "status": "finished", "durationMs": ts - t0})
    return events


def run_row(
    run_id: str, events: list[dict[str, Any]], *, name: str = "big", app: str = "bench"
) -> dict[str, Any]:
    return {
        "id": run_id,
        "app": app,
        "name": name,
        "status": "finished",
        "startedAt": events[0]["ts"],
        "endedAt": events[-1]["ts"],
        "nodeCount": 0,
        "eventCount": len(events),
        "heldCount": 0,
        "clientId": "c1",
        "meta": {},
    }
