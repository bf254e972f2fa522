"""The run summary `graphmind demo` prints: nodes, executions, and every gate held and answered."""

from __future__ import annotations

import json
import urllib.request
from collections import Counter
from typing import Any

from ..store import status as rule


def _get(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=5) as response:
        return json.loads(response.read())


def node_lines(nodes: list[dict[str, Any]], events: list[dict[str, Any]], run_status: str) -> list[str]:
    """One line per node: how its calls ended, each status counted (`3 calls: 2 ok, 1 aborted`),
    not only the latest one's, which would read as if every call had ended that way."""
    per_call: dict[tuple[str, str], str] = {}
    agent: tuple[str, str] | None = None  # run.finished names no node: it ends the agent's call
    for event in events:
        node_id, instance = event.get("nodeId"), event.get("instanceId")
        if event.get("type") == "run.finished" and agent is not None:
            node_id, instance = agent
        if not isinstance(node_id, str) or not isinstance(instance, str):
            continue
        key = (node_id, instance)
        if event.get("type") == "run.started":
            agent = key
        if key in per_call or event.get("type") in rule.STARTS:
            per_call[key] = rule.execution(per_call.get(key, "running"), event)
    lines = []
    for node in nodes:
        counts = Counter(
            rule.shown(status, run_status)
            for (node_id, _), status in per_call.items()
            if node_id == node["nodeId"]
        )
        if not counts:  # its events were not all read back: the hub's word for the latest call
            counts = Counter({node["status"]: node["executions"]})
        calls = sum(counts.values())
        ended = ", ".join(f"{n} {status}" for status, n in counts.items())
        lines.append(f"  {node['nodeId']:<22} {calls:>2} call{'' if calls == 1 else 's'}: {ended}")
    return lines


def print_summary(base: str, run_id: str, answered: list[dict[str, Any]] | None) -> None:
    try:
        run = _get(base, f"/api/runs/{run_id}")
        events = _get(base, f"/api/runs/{run_id}/events?limit=5000")["events"]
    except OSError as exc:
        print(f"(could not read the run back from the hub: {exc})")
        return
    started, ended = run.get("startedAt"), run.get("endedAt")
    took = f" in {(ended - started) / 1000:.2f} s" if started and ended else ""
    print(f"\nRun {run.get('name')} ({run.get('status')}){took}: {run.get('eventCount')} events")
    for line in node_lines(run.get("nodes", []), events, str(run.get("status"))):
        print(line)
    paused = {e["gateId"]: e for e in events if e.get("type") == "exec.paused"}
    resumed = [e for e in events if e.get("type") == "exec.resumed"]
    if not resumed:
        print("Gates: none held")
    else:
        print("Gates held and answered:")
        for event in resumed:
            held = paused.get(event["gateId"], {})
            why = held.get("reason", "?")
            if why == "loop" and held.get("loop"):
                why = f"loop, {held['loop'].get('repeats')}× identical arguments"
            print(
                f"  {event['nodeId']} {event['gate']} gate ({why}): held {event['heldMs'] / 1000:.2f} s, answered {event['action']}"
            )
    injected = [e for e in events if e.get("type") == "node.finished" and e.get("injected")]
    if injected:
        print(f"Injected results: {', '.join(e['nodeId'] for e in injected)}")
    if answered is not None:
        print(f"(--headless answered {len(answered)} gate(s) with continue)")
