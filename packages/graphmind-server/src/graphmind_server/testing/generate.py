"""Stored runs made up in bulk, for the trends page's tests and the performance benchmarks.

    from graphmind_server.testing.generate import generate_runs
    summary = generate_runs(tmp_path / "hub.db", runs=2000, apps=3, models=4, days=30)

The events go through the store's own writer (store/writer.py), the path every stored event takes,
so the runs, nodes, usage, search index and node_stats rows are the hub's own. Deterministic for a
seed. The database must not be open in a running hub.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..store.items import EventItem
from ..store.schema import open_database
from ..store.writer import Writer

MODELS = ("gpt-4o-mini", "gpt-4.1", "claude-sonnet-4", "gemini-2.5-flash", "gpt-5-mini", "claude-3-5-haiku")
APPS = ("support-bot", "travel-planner", "research-agent", "billing-agent", "triage")
TOOLS = ("search", "lookup_order", "send_email", "fetch_page")
REPORTED = "gemini-2.5-flash"  # this model's calls report their cost (as LiteLLM's do); the rest are priced
BATCH = 5000
DAY_MS = 86_400_000.0


@dataclass
class Generated:
    """What was written: the run ids and time range, for a test to check against."""

    runs: int = 0
    events: int = 0
    since_ms: float = 0.0
    until_ms: float = 0.0
    apps: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)


def _run_events(
    rng: random.Random, run_id: str, app: str, models: list[str], start: float
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"type": "run.started", "runId": run_id, "ts": start, "name": f"{app} turn", "app": app, "meta": {}}
    ]
    t = start + rng.uniform(1, 20)
    failed = False
    for step in range(rng.randint(1, 3)):
        model = rng.choice(models)
        instance = f"{run_id}:llm:{step}"
        took = rng.lognormvariate(6.5, 0.6)  # ~700 ms, a long tail
        out.append(
            {
                "type": "node.started", "runId": run_id, "ts": t, "nodeId": "llm:step", "instanceId": instance,
                "kind": "llm", "name": "chat", "parentInstanceId": run_id,
                "input": {"model": model, "messages": [{"role": "user", "content": f"question {step} of {run_id}"}]},
                "attrs": {"model": model},
            }
        )  # fmt: skip
        t += took
        usage: dict[str, Any] = {"inputTokens": rng.randint(200, 4000), "outputTokens": rng.randint(20, 800)}
        usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
        if model == REPORTED:
            usage["costUsd"] = round(usage["totalTokens"] * 0.0000007, 8)
        out.append(
            {
                "type": "node.finished", "runId": run_id, "ts": t, "nodeId": "llm:step", "instanceId": instance,
                "output": {"role": "assistant", "content": f"answer {step}"}, "durationMs": round(took, 2),
                "heldMs": 0, "usage": usage,
            }
        )  # fmt: skip
        tool = rng.choice(TOOLS)
        tinstance = f"{run_id}:tool:{step}"
        took = rng.lognormvariate(4.5, 0.8)
        out.append(
            {
                "type": "node.started", "runId": run_id, "ts": t, "nodeId": f"tool:{tool}", "instanceId": tinstance,
                "kind": "tool", "name": tool, "parentInstanceId": run_id, "input": {"q": f"{tool} {step}"},
            }
        )  # fmt: skip
        t += took
        if rng.random() < 0.04:
            failed = True
            out.append(
                {
                    "type": "node.error", "runId": run_id, "ts": t, "nodeId": f"tool:{tool}",
                    "instanceId": tinstance, "durationMs": round(took, 2), "heldMs": 0,
                    "error": {"name": "TimeoutError", "message": f"{tool} timed out", "stack": ""},
                }
            )  # fmt: skip
            break
        out.append(
            {
                "type": "node.finished", "runId": run_id, "ts": t, "nodeId": f"tool:{tool}", "instanceId": tinstance,
                "output": {"ok": True}, "durationMs": round(took, 2), "heldMs": 0,
            }
        )  # fmt: skip
    out.append(
        {
            "type": "run.finished", "runId": run_id, "ts": t + 1, "status": "error" if failed else "finished",
            "durationMs": round(t + 1 - start, 2),
            **({"error": {"name": "TimeoutError", "message": "a tool timed out", "stack": ""}} if failed else {}),
        }
    )  # fmt: skip
    return out


def generate_runs(
    db: str | Path,
    *,
    runs: int = 2000,
    apps: int = 3,
    models: int = 4,
    days: int = 30,
    seed: int = 0,
    now_ms: float | None = None,
) -> Generated:
    """Store `runs` finished runs of `apps` apps calling `models` models (and tools) over the last
    `days` days, spread evenly with some noise; about 4% end in a tool error."""
    if not (1 <= apps <= len(APPS) and 1 <= models <= len(MODELS)):
        raise ValueError(f"apps must be 1..{len(APPS)} and models 1..{len(MODELS)}")
    rng = random.Random(seed)
    now = time.time() * 1000.0 if now_ms is None else now_ms
    since = now - days * DAY_MS
    app_names, model_names = list(APPS[:apps]), list(MODELS[:models])
    conn = open_database(Path(db))
    out = Generated(since_ms=since, until_ms=now, apps=app_names, models=model_names)
    try:
        writer = Writer(conn, lambda committed: None)
        seq = 0
        batch: list[EventItem] = []
        for i in range(runs):
            app = app_names[i % apps]
            start = since + (i + rng.random()) * (now - since - 60_000.0) / runs
            for event in _run_events(rng, f"gen-{seed}-{i:06d}", app, model_names, start):
                seq += 1
                event["seq"] = seq
                batch.append(EventItem("gen-client", app, event, json.dumps(event), event["ts"]))
            out.runs += 1
            if len(batch) >= BATCH:
                out.events += writer.write_now(batch)
                batch = []
        if batch:
            out.events += writer.write_now(batch)
    finally:
        conn.close()
    return out
