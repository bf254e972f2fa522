"""Replay cost (docs/replay.md, "Performance"; target < 1 ms per replayed step).

  per step     one replayed gated tool with three scalar arguments (decision, canonical match, the
               inject conversion, node.finished), next to the same call running live detached; the
               difference is what a replayed step costs over a live one whose body is free
  1,000 steps  a cassette of 1,000 steps (a model-reply-shaped tool and a tool, alternating, with
               nested arguments) written, loaded and replayed end to end: load time, replay time,
               time per step, and per step over the same 1,000 calls made bare (no client)

Detached (no hub): the app's own cost. Clock: process CPU time. Run:
`uv run python bench/replay.py [--rounds 9] [--calls 2000] [--steps 1000]`. Not a timed test.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import graphmind
from graphmind._replay.cassette import Cassette, write_cassette

CLOCK = time.process_time_ns
NOWHERE = "ws://127.0.0.1:9/ingest"  # detached: nothing listens there


def bare_lookup(city: str, day: int, budget: float) -> dict[str, Any]:
    return {"city": city, "day": day, "budget": budget}


def bare_plan(messages: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    return {"content": f"step {len(messages)}", "tool_calls": []}


def _tools(client: graphmind.Client) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return client.wrap(bare_lookup, "lookup"), client.wrap(bare_plan, "plan")


def _record(path: Path, steps: int) -> None:
    events: list[dict[str, Any]] = []
    client = graphmind.Client(app="bench-replay", url=NOWHERE)
    client._tap = events.append
    lookup, plan = _tools(client)
    with client.run("bench"):
        for i in range(steps // 2):
            lookup("Cairo", i, 100.5)
            plan([{"role": "user", "content": f"q{i}"}] * 3, {"temperature": 0.2, "step": i})
    client.dispose()
    write_cassette(path, client.client_id, events)


def _calls(fn: Callable[..., Any], calls: int, step: int) -> float:
    start = CLOCK()
    for i in range(calls):
        fn("Cairo", step * calls + i, 100.5)
    return (CLOCK() - start) / calls / 1000.0


def per_step(rounds: int, calls: int, folder: Path) -> None:
    path = folder / "per_step.jsonl"
    events: list[dict[str, Any]] = []
    client = graphmind.Client(app="bench-replay", url=NOWHERE, buffer_size=rounds * calls + 10)
    client._tap = events.append
    lookup, _ = _tools(client)
    for r in range(rounds):
        for i in range(calls):
            lookup("Cairo", r * calls + i, 100.5)
    client.dispose()
    write_cassette(path, client.client_id, events)
    live_client = graphmind.Client(app="bench-replay", url=NOWHERE, buffer_size=rounds * calls + 10)
    replay_client = graphmind.Client(
        app="bench-replay",
        url=NOWHERE,
        buffer_size=rounds * calls + 10,
        replay={"source": path, "on_divergence": "fail"},
    )
    live, _ = _tools(live_client)
    replayed, _ = _tools(replay_client)
    live_us, replay_us = [], []
    for r in range(rounds):
        live_us.append(_calls(live, calls, r))
        replay_us.append(_calls(replayed, calls, r))
    live_client.dispose()
    replay_client.dispose()
    lm, rm = statistics.median(live_us), statistics.median(replay_us)
    print(
        f"per step: live detached {lm:.1f} µs, replayed {rm:.1f} µs, a replayed step costs {rm - lm:+.1f} µs over live"
    )


def end_to_end(steps: int, folder: Path) -> None:
    path = folder / "steps.jsonl"
    _record(path, steps)
    start = CLOCK()
    Cassette.load(path)
    load_ms = (CLOCK() - start) / 1e6
    client = graphmind.Client(
        app="bench-replay", url=NOWHERE, replay={"source": path, "on_divergence": "fail"}
    )
    setup_ms = (CLOCK() - start) / 1e6
    lookup, plan = _tools(client)
    start = CLOCK()
    with client.run("bench"):
        for i in range(steps // 2):
            lookup("Cairo", i, 100.5)
            plan([{"role": "user", "content": f"q{i}"}] * 3, {"temperature": 0.2, "step": i})
    replay_ms = (CLOCK() - start) / 1e6
    assert client._replay is not None and client._replay.replayed == steps, client._replay
    client.dispose()
    start = CLOCK()
    for i in range(steps // 2):  # the same calls, unwrapped: what a step costs with no GraphMind
        bare_lookup("Cairo", i, 100.5)
        bare_plan([{"role": "user", "content": f"q{i}"}] * 3, {"temperature": 0.2, "step": i})
    bare_ms = (CLOCK() - start) / 1e6
    size = path.stat().st_size / 1e6
    over = (replay_ms - bare_ms) / steps * 1000
    print(
        f"{steps:,} steps ({size:.1f} MB cassette): load {load_ms:.0f} ms (with client {setup_ms:.0f} ms), "
        f"replay {replay_ms:.0f} ms = {replay_ms / steps * 1000:.0f} µs per step; the bare calls "
        f"{bare_ms:.1f} ms: {over:.0f} µs per step over a bare call (target < 1,000 µs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        per_step(args.rounds, args.calls, Path(tmp))
        end_to_end(args.steps, Path(tmp))


if __name__ == "__main__":
    main()
