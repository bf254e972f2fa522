"""What an attached client costs per call, in counts: frames sent and transport wake-ups per call.

Attached to the real hub (a subprocess), no breakpoint, two call shapes:

  core wrap     `client.wrap(fn)` called back to back (the app never releases the GIL)
  openai plain  graphmind-openai's `chat.completions.create` over a mock transport (the SDK
                releases the GIL a few times per call: `os.urandom`, locks), from bench/openai_overhead.py

For each: WebSocket frames the transport sent per call (`ws.send`), batches it took from the ring per
call (each is one wake-up of the transport thread, a GIL hand-off on the app's thread), the calling
thread's CPU per call and the whole process's (the transport thread included; the hub is not).
Counts are deterministic for a given window and call speed; the CPU figures are medians of rounds.
Before issue 17's batching: 2.00 frames per call (one per event) and, for openai, ~0.8 wake-ups.
Run: `uv run python bench/attached_frames.py [--rounds 9] [--calls 500]`. Not a timed test.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import openai_overhead as ob

import graphmind
from graphmind_openai import instrument_openai
from graphmind_server.testing import HubProcess


def search(query: str, limit: int) -> int:
    return limit


def measure(client: graphmind.Client, fn: Callable[[], Any], rounds: int, calls: int) -> dict[str, float]:
    transport = client._transport
    assert transport is not None and transport._ws is not None
    frames = [0]
    send = transport._ws.send

    def counting(text: str) -> None:
        frames[0] += 1
        send(text)

    transport._ws.send = counting
    rows: list[tuple[float, ...]] = []
    try:
        for round_ in range(rounds + 1):
            f0, b0, e0 = frames[0], transport._progress, transport.counters["sent"]
            p0, t0 = time.process_time_ns(), time.thread_time_ns()
            for _ in range(calls):
                fn()
            t1 = time.thread_time_ns()
            transport.flush()  # inside the window: the transport's sends belong to these calls
            p1 = time.process_time_ns()
            if round_:  # round 0 warms up
                rows.append(
                    (
                        (frames[0] - f0) / calls,
                        (transport._progress - b0) / calls,
                        (t1 - t0) / calls / 1000,
                        (p1 - p0) / calls / 1000,
                        (transport.counters["sent"] - e0) / calls,
                    )
                )
    finally:
        transport._ws.send = send
    keys = ("frames", "wakeups", "app_us", "process_us", "events")
    return {k: statistics.median(r[i] for r in rows) for i, k in enumerate(keys)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    hub = HubProcess(tempfile.mkdtemp(prefix="gm-bench-") + "/hub.db")
    client = graphmind.Client(app="bench", url=hub.ingest_url)
    try:
        if not client.ready(5):
            raise SystemExit("the hub did not attach")
        tool = client.wrap(search)
        counter = itertools.count()
        shapes: dict[str, Callable[[], Any]] = {
            "core wrap": lambda: tool("q", next(counter)),  # new arguments each call: no loop hold
            "openai plain": functools.partial(ob.plain, instrument_openai(ob.make_client(), session=client)),
        }
        print(
            f"{'':14}{'events/call':>12}{'frames/call':>12}{'wake-ups/call':>15}{'app µs':>9}{'process µs':>12}"
        )
        for name, fn in shapes.items():
            calls = args.calls * (10 if name == "core wrap" else 1)
            row = measure(client, fn, args.rounds, calls)
            print(
                f"{name:<14}{row['events']:>12.3f}{row['frames']:>12.3f}{row['wakeups']:>15.3f}{row['app_us']:>9.1f}{row['process_us']:>12.1f}"
            )
    finally:
        client.dispose()
        hub.stop()


if __name__ == "__main__":
    main()
