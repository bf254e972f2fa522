"""Per-call overhead of a core-gated tool with three scalar arguments, next to a bare OpenTelemetry span.

Variants, timed in interleaved rounds (a busy machine slows them all alike), sync and async:

  bare           the function alone
  detached       `client.wrap(fn)` with no hub (events go to the replay buffer)
  attached       `client.wrap(fn)` attached to the real hub (a subprocess: its CPU is not the app's),
                 no breakpoint; each batch is timed until the hub has all its events (so the
                 transport thread's sends count here, not in the variant timed next)
  otel span      the function inside a bare OpenTelemetry span (SDK TracerProvider, in-memory
                 exporter) that records the input and the output as JSON attributes: the least a
                 tracer does to show the same data

Clock: process CPU time (`time.process_time_ns`: the transport thread's work is counted; waiting on
a loaded machine is not); `--wall` for wall time. Prints the median µs per call, each variant's
overhead over bare and graphmind's overhead as a fraction of the span's (target, issue 17: <= 0.5).
Run: `uv run python bench/overhead.py [--rounds 15] [--calls 2000]`. Not a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import graphmind
from graphmind_server.testing import HubProcess

CLOCK = time.process_time_ns


def search(query: str, limit: int, fuzzy: bool) -> int:
    return limit


async def asearch(query: str, limit: int, fuzzy: bool) -> int:
    return limit


def otel_wrappers(exporter: InMemorySpanExporter) -> tuple[Callable[..., Any], Callable[..., Any]]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")

    def traced(query: str, limit: int, fuzzy: bool) -> int:
        with tracer.start_as_current_span("search") as span:
            span.set_attribute("input", json.dumps({"query": query, "limit": limit, "fuzzy": fuzzy}))
            out = search(query, limit, fuzzy)
            span.set_attribute("output", json.dumps(out))
            return out

    async def atraced(query: str, limit: int, fuzzy: bool) -> int:
        with tracer.start_as_current_span("search") as span:
            span.set_attribute("input", json.dumps({"query": query, "limit": limit, "fuzzy": fuzzy}))
            out = await asearch(query, limit, fuzzy)
            span.set_attribute("output", json.dumps(out))
            return out

    return traced, atraced


def _nothing() -> None:
    return None


def batch_us(fn: Callable[..., Any], calls: int, settle: Callable[[], Any] = _nothing) -> float:
    start = CLOCK()
    for i in range(calls):
        fn("q", i, True)
    settle()  # inside the window: the transport thread's sends belong to the variant that caused them
    return (CLOCK() - start) / calls / 1000


def abatch_us(
    loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], calls: int, settle: Callable[[], Any] = _nothing
) -> float:
    async def run() -> float:
        start = CLOCK()
        for i in range(calls):
            await fn("q", i, True)
        settle()
        return (CLOCK() - start) / calls / 1000

    return loop.run_until_complete(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2_000)
    parser.add_argument("--wall", action="store_true", help="wall time instead of process CPU time")
    args = parser.parse_args()
    global CLOCK
    if args.wall:
        CLOCK = time.perf_counter_ns

    exporter = InMemorySpanExporter()
    traced, atraced = otel_wrappers(exporter)
    detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    hub = HubProcess(os.path.join(tempfile.mkdtemp(prefix="gm-bench-"), "hub.db"))
    attached = graphmind.Client(app="bench", url=hub.ingest_url)
    if not attached.ready(5):
        raise SystemExit("the in-process hub did not attach")
    variants: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
        "bare": (search, asearch),
        "detached": (detached.wrap(search), detached.wrap(asearch)),
        "attached": (attached.wrap(search), attached.wrap(asearch)),
        "otel span": (traced, atraced),
    }
    transport = attached._transport
    assert transport is not None

    def sent() -> None:
        transport.flush()

    samples: dict[str, dict[str, list[float]]] = {n: {"sync": [], "async": []} for n in variants}
    loop = asyncio.new_event_loop()
    try:
        for round_ in range(args.rounds + 1):
            for name, (fn, afn) in variants.items():
                # Attached, the batch is timed until the hub has every event (process CPU counts the
                # transport thread): else its sends would be billed to the variant timed next.
                settle = sent if name == "attached" else _nothing
                s = batch_us(fn, args.calls, settle)
                a = abatch_us(loop, afn, args.calls, settle)
                exporter.clear()
                if round_:  # round 0 warms up
                    samples[name]["sync"].append(s)
                    samples[name]["async"].append(a)
    finally:
        loop.close()
        detached.dispose()
        attached.dispose()
        hub.stop()
    med = {n: {k: statistics.median(v) for k, v in row.items()} for n, row in samples.items()}
    bare, span = med["bare"], med["otel span"]
    clock = "wall" if args.wall else "process CPU"
    print(f"{args.rounds} interleaved rounds of {args.calls} calls, {clock} µs per call (median)")
    print(f"{'':12}{'sync':>9}{'overhead':>10}{'vs span':>9}{'async':>9}{'overhead':>10}{'vs span':>9}")
    for name, row in med.items():
        cells = [f"{name:<12}"]
        for k in ("sync", "async"):
            over = row[k] - bare[k]
            span_over = span[k] - bare[k]
            cells.append(f"{row[k]:>9.2f}")
            cells.append(f"{over:>+10.2f}" if name != "bare" else f"{'':>10}")
            ratio = over / span_over if span_over > 0 else float("nan")
            cells.append(f"{ratio:>9.2f}" if name in ("detached", "attached") else f"{'':>9}")
        print("".join(cells))
    print(
        f"target: graphmind <= 0.5x the span's overhead; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
