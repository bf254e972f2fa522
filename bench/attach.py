"""What attach-by-default costs a script's first call when no hub is running.

The first run or gated call of a client now probes the hub's port when the URL is on loopback
(one TCP connect) and waits for the handshake only if something accepts. With nothing listening
the connect is refused at once. This measures the first gated call of a fresh client, default
options (the probe) against `wait_for_attach=False` (what every client did before), in
interleaved rounds in one process, on a loopback port that refuses. It also shows the later calls
are unchanged (the probe happens once per client).

Run: `uv run python bench/attach.py`. Not a timed test: numbers depend on the machine.
"""

from __future__ import annotations

import socket
import statistics
import time

import graphmind

ROUNDS = 200


def refused_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"ws://127.0.0.1:{port}/ingest"


def first_and_later_call_us(url: str, **options: object) -> tuple[float, float]:
    client = graphmind.Client(app="bench", url=url, loop_guard=False, **options)
    try:
        search = client.wrap(lambda q: q, name="search")
        start = time.perf_counter_ns()
        search("q")
        first = (time.perf_counter_ns() - start) / 1000
        start = time.perf_counter_ns()
        for _ in range(100):
            search("q")
        later = (time.perf_counter_ns() - start) / 100 / 1000
        return first, later
    finally:
        client.dispose()


def main() -> None:
    url = refused_url()
    before_first, before_later, now_first, now_later = [], [], [], []
    for i in range(ROUNDS):  # interleaved, alternating which goes first
        order = [("before", {"wait_for_attach": False}), ("now", {})]
        for name, options in order if i % 2 else reversed(order):
            first, later = first_and_later_call_us(url, **options)
            (before_first if name == "before" else now_first).append(first)
            (before_later if name == "before" else now_later).append(later)
    b, n = statistics.median(before_first), statistics.median(now_first)
    print(f"first gated call, nothing listening ({ROUNDS} fresh clients each, median):")
    print(f"  wait_for_attach=False (before): {b:8.1f} µs")
    print(f"  default (loopback probe):       {n:8.1f} µs")
    print(f"  difference: {n - b:+.1f} µs ({(n - b) / 1000:+.3f} ms), ratio {n / b:.2f}×")
    print(
        f"later calls: {statistics.median(before_later):.1f} µs before, {statistics.median(now_later):.1f} µs now "
        "(the probe happens once per client)"
    )


if __name__ == "__main__":
    main()
