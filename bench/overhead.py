"""Per-call overhead of a gated tool with three scalar arguments.

Prints the median cost per call of: the bare function, the gated function with no hub (detached),
and the gated function attached to a hub with no breakpoint (gates resolve on the local fast path).
Run: `uv run python bench/overhead.py`. Not a timed test: numbers depend on the machine.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable

import graphmind
from graphmind.testing import FakeHub

ROUNDS = 15
CALLS = 2_000


def search(query: str, limit: int, fuzzy: bool) -> int:
    return limit


async def asearch(query: str, limit: int, fuzzy: bool) -> int:
    return limit


def per_call_us(fn: Callable[..., object]) -> float:
    samples = []
    for _ in range(ROUNDS):
        start = time.perf_counter_ns()
        for i in range(CALLS):
            fn("q", i, True)
        samples.append((time.perf_counter_ns() - start) / CALLS / 1000)
    return statistics.median(samples)


def aper_call_us(fn: Callable[..., object]) -> float:
    async def loop() -> float:
        samples = []
        for _ in range(ROUNDS):
            start = time.perf_counter_ns()
            for i in range(CALLS):
                await fn("q", i, True)  # type: ignore[misc]
            samples.append((time.perf_counter_ns() - start) / CALLS / 1000)
        return statistics.median(samples)

    return asyncio.run(loop())


def main() -> None:
    bare = per_call_us(search)
    abare = aper_call_us(asearch)
    detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    d = per_call_us(detached.wrap(search))
    ad = aper_call_us(detached.wrap(asearch))
    detached.dispose()
    with FakeHub() as hub:
        attached = graphmind.Client(app="bench", url=hub.url)
        assert attached.ready(5)
        a = per_call_us(attached.wrap(search))
        aa = aper_call_us(attached.wrap(asearch))
        attached.dispose()
    print(f"{'':32}{'sync µs/call':>14}{'async µs/call':>15}")
    print(f"{'bare function':32}{bare:14.2f}{abare:15.2f}")
    print(f"{'detached (no hub)':32}{d:14.2f}{ad:15.2f}   overhead {d - bare:.2f} / {ad - abare:.2f} µs")
    print(
        f"{'attached, no breakpoint':32}{a:14.2f}{aa:15.2f}   overhead {a - bare:.2f} / {aa - abare:.2f} µs"
    )
    print(
        f"target: detached overhead under 20 µs -> {'met' if d - bare < 20 and ad - abare < 20 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
