"""Per-call overhead of graphmind-litellm, next to openinference-instrumentation-litellm.

    uv run python bench/litellm_overhead.py [--calls 100] [--rounds 15]

One process, no network: every call is `litellm.completion(..., mock_response=...)`, so what is
measured is LiteLLM itself (its setup, its logging object, its mock path: about 1.7 ms a call here)
and the instrumentation around it. Two shapes: a plain call, and `stream=True` read to the end.
Variants, interleaved round by round so a busy machine slows all of them alike:

  bare           LiteLLM alone
  detached       instrument_litellm() with GraphMind enabled and no hub (events go to the replay buffer)
  logger         litellm.callbacks = [GraphmindLogger()] (detached), without instrument_litellm()
  openinference  LiteLLMInstrumentor with an in-memory span exporter (SimpleSpanProcessor)

Time is the calling thread's CPU time (`time.thread_time_ns`) unless `--wall`: on a shared 2-core
machine wall time mostly measures the neighbours, and LiteLLM's own mock stream sleeps between
chunks. Work LiteLLM does on its background logging threads (its success handlers, and so the
`logger` variant's node endings) is not counted for any variant.

Prints the best batch per variant (median in brackets), each overhead over bare, and that overhead
as a fraction of openinference's. Target (issue 12): detached <= 0.10 x openinference's overhead.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else LiteLLM fetches its cost map at import

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import litellm

import graphmind
from graphmind_litellm import GraphmindLogger, instrument_litellm, uninstrument_litellm

MODEL = "openai/gpt-4o-mini"
MESSAGES = [
    {"role": "system", "content": "You plan trips."},
    {"role": "user", "content": "Plan a day in Cairo"},
]
REPLY = "Visit the pyramids at Giza, then the Egyptian Museum and Khan el-Khalili."


def plain() -> Any:
    return litellm.completion(model=MODEL, messages=MESSAGES, mock_response=REPLY)


def streamed() -> int:
    chunks = 0
    for _ in litellm.completion(model=MODEL, messages=MESSAGES, mock_response=REPLY, stream=True):
        chunks += 1
    return chunks


CLOCK = time.thread_time_ns


def batch_us(fn: Callable[[], Any], calls: int) -> float:
    start = CLOCK()
    for _ in range(calls):
        fn()
    return (CLOCK() - start) / calls / 1000


def openinference_toggle() -> tuple[Callable[[], None], Callable[[], None]] | None:
    try:
        from openinference.instrumentation.litellm import LiteLLMInstrumentor
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError as exc:
        print(f"openinference-instrumentation-litellm is not installed ({exc}); its row is skipped")
        return None
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LiteLLMInstrumentor()

    def on() -> None:
        instrumentor.instrument(tracer_provider=provider)

    def off() -> None:
        instrumentor.uninstrument()
        exporter.clear()

    on()
    try:
        plain()
        spans = len(exporter.get_finished_spans())
    finally:
        off()
    if spans < 1:
        print("openinference recorded no span with this litellm version; its row is skipped")
        return None
    return on, off


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--wall", action="store_true", help="time wall-clock time instead of the calling thread's CPU time"
    )
    args = parser.parse_args()
    global CLOCK
    if args.wall:
        CLOCK = time.perf_counter_ns

    session = graphmind.Client(
        app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60
    )  # enabled, never attaches
    logger = GraphmindLogger(session=session)

    def logger_on() -> None:
        litellm.callbacks = [logger]

    def logger_off() -> None:
        for name in (
            "callbacks",
            "input_callback",
            "success_callback",
            "failure_callback",
            "_async_success_callback",
            "_async_failure_callback",
        ):
            setattr(litellm, name, [])

    toggles: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "bare": (lambda: None, lambda: None),
        "detached": (lambda: instrument_litellm(session=session), uninstrument_litellm),
        "logger": (logger_on, logger_off),
    }
    oi = openinference_toggle()
    if oi is not None:
        toggles["openinference"] = oi
    shapes = {"plain": plain, "stream": streamed}
    samples: dict[str, dict[str, list[float]]] = {name: {shape: [] for shape in shapes} for name in toggles}
    for round_ in range(args.rounds + 1):
        for name, (on, off) in toggles.items():
            on()  # each variant is on only for its own turn (they all patch the same module)
            try:
                for shape, fn in shapes.items():
                    value = batch_us(fn, args.calls)
                    if round_:  # round 0 warms up
                        samples[name][shape].append(value)
            finally:
                off()
    stats = session.stats()
    session.dispose()

    best = {name: {shape: min(v) for shape, v in per.items()} for name, per in samples.items()}
    medians = {
        name: {shape: statistics.median(v) for shape, v in per.items()} for name, per in samples.items()
    }
    import importlib.metadata

    clock = "wall" if args.wall else "thread CPU"
    print(
        f"litellm {importlib.metadata.version('litellm')}; {args.rounds} interleaved rounds of {args.calls} calls; {clock} µs per call, best batch (median)"
    )
    bare = best["bare"]
    header = f"{'variant':<15}" + "".join(
        f"{shape + ' µs':>20}{'overhead':>10}{'vs OI':>8}" for shape in shapes
    )
    print(header)
    for name, row in best.items():
        cells = [f"{name:<15}"]
        for shape in shapes:
            over = row[shape] - bare[shape]
            cells.append(f"{row[shape]:>9.1f} ({medians[name][shape]:>7.1f})")
            cells.append(f"{over:>+10.1f}" if name != "bare" else f"{'':>10}")
            if name not in ("bare", "openinference") and "openinference" in best:
                oi_over = best["openinference"][shape] - bare[shape]
                cells.append(f"{over / oi_over:>8.3f}" if oi_over > 0 else f"{'n/a':>8}")
            else:
                cells.append(f"{'':>8}")
        print("".join(cells))
    print(
        f"\nGraphMind events recorded detached: {stats['events']} (the replay buffer keeps the newest {stats['buffered']})"
    )


if __name__ == "__main__":
    main()
