"""The run summary `graphmind demo` prints: nodes, executions, and every gate held and answered."""

from __future__ import annotations

import json
import urllib.request
from typing import Any


def _get(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=5) as response:
        return json.loads(response.read())


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
    for node in run.get("nodes", []):
        print(f"  {node['nodeId']:<22} {node['executions']:>2} × {node['status']}")
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
