"""Overhead of a streaming tool (a generator under `client.wrap`), next to a bare OpenTelemetry span
that records the same data (issue 16 item 1).

Variants, timed in interleaved rounds (a busy machine slows them all alike), sync and async, each
call a generator of `--chunks` small dict chunks read to its end:

  bare           the generator alone
  detached       `client.wrap(gen)` with no hub: a node, one `node.token` delta per chunk (a line
                 of JSON), the list of chunks as the output; events go to the replay buffer
  otel span      the generator inside a bare OpenTelemetry span (SDK TracerProvider, in-memory
                 exporter) that adds one span event per chunk (its JSON) and the list of chunks as
                 the output attribute: the least a tracer does to show the same data

No peer instruments plain Python generators (openinference's instrumentors wrap frameworks), so the
span is the reference, as in bench/overhead.py. Clock: process CPU time. Prints the median µs per
call and per chunk, and graphmind's overhead as a fraction of the span's.
Run: `uv run python bench/stream_tools.py [--rounds 15] [--calls 300] [--chunks 20]`. Not a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import graphmind

CLOCK = time.process_time_ns
CHUNKS = 20


def results(query: str) -> Iterator[dict[str, Any]]:
    for i in range(CHUNKS):
        yield {"flight": f"TP{i}", "price": 90 + i}


async def aresults(query: str) -> AsyncIterator[dict[str, Any]]:
    for i in range(CHUNKS):
        yield {"flight": f"TP{i}", "price": 90 + i}


def otel_wrappers(exporter: InMemorySpanExporter) -> tuple[Callable[..., Any], Callable[..., Any]]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")

    def traced(query: str) -> Iterator[dict[str, Any]]:
        with tracer.start_as_current_span("results") as span:
            span.set_attribute("input", json.dumps({"query": query}))
            chunks = []
            for chunk in results(query):
                span.add_event("chunk", {"v": json.dumps(chunk)})
                chunks.append(chunk)
                yield chunk
            span.set_attribute("output", json.dumps(chunks))

    async def atraced(query: str) -> AsyncIterator[dict[str, Any]]:
        with tracer.start_as_current_span("results") as span:
            span.set_attribute("input", json.dumps({"query": query}))
            chunks = []
            async for chunk in aresults(query):
                span.add_event("chunk", {"v": json.dumps(chunk)})
                chunks.append(chunk)
                yield chunk
            span.set_attribute("output", json.dumps(chunks))

    return traced, atraced


def batch_us(fn: Callable[..., Iterator[Any]], calls: int) -> float:
    start = CLOCK()
    for _ in range(calls):
        for _chunk in fn("q"):
            pass
    return (CLOCK() - start) / calls / 1000


def abatch_us(loop: asyncio.AbstractEventLoop, fn: Callable[..., AsyncIterator[Any]], calls: int) -> float:
    async def run() -> float:
        start = CLOCK()
        for _ in range(calls):
            async for _chunk in fn("q"):
                pass
        return (CLOCK() - start) / calls / 1000

    return loop.run_until_complete(run())


def main() -> None:
    global CHUNKS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--chunks", type=int, default=CHUNKS)
    args = parser.parse_args()
    CHUNKS = args.chunks

    exporter = InMemorySpanExporter()
    traced, atraced = otel_wrappers(exporter)
    # The loop guard would warn about identical calls in a row; this bench measures the stream.
    detached = graphmind.Client(
        app="bench",
        url="ws://127.0.0.1:9/ingest",
        retry_interval=3600,
        loop_guard=False,
        wait_for_attach=False,
    )
    variants: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
        "bare": (results, aresults),
        "detached": (detached.wrap(results), detached.wrap(aresults)),
        "otel span": (traced, atraced),
    }
    samples: dict[str, dict[str, list[float]]] = {n: {"sync": [], "async": []} for n in variants}
    loop = asyncio.new_event_loop()
    try:
        for round_ in range(args.rounds + 1):
            for name, (fn, afn) in variants.items():
                s = batch_us(fn, args.calls)
                a = abatch_us(loop, afn, args.calls)
                exporter.clear()
                if round_:  # round 0 warms up
                    samples[name]["sync"].append(s)
                    samples[name]["async"].append(a)
    finally:
        loop.close()
        detached.dispose()
    med = {n: {k: statistics.median(v) for k, v in row.items()} for n, row in samples.items()}
    bare, span = med["bare"], med["otel span"]
    print(
        f"{args.rounds} interleaved rounds of {args.calls} calls of {CHUNKS} chunks, process CPU µs per call (median)"
    )
    print(f"{'':12}{'sync':>9}{'/chunk':>8}{'vs span':>9}{'async':>9}{'/chunk':>8}{'vs span':>9}")
    for name, row in med.items():
        cells = [f"{name:<12}"]
        for k in ("sync", "async"):
            over = row[k] - bare[k]
            span_over = span[k] - bare[k]
            cells.append(f"{row[k]:>9.1f}")
            cells.append(f"{over / CHUNKS:>+8.2f}" if name != "bare" else f"{'':>8}")
            ratio = over / span_over if span_over > 0 else float("nan")
            cells.append(f"{ratio:>9.2f}" if name == "detached" else f"{'':>9}")
        print("".join(cells))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
