"""Per-call overhead of graphmind-llamaindex, next to openinference-instrumentation-llama-index.

    uv run python bench/llamaindex_overhead.py [--calls 200] [--rounds 15] [--cpu]

One process, no network: an LLM `chat` on the scripted `FunctionCallingLLM`
(graphmind_llamaindex.testing) and a `FunctionTool.call`, both real LlamaIndex objects, so what is
measured is LlamaIndex's own dispatch plus the instrumentation. Variants:

  bare          LlamaIndex alone
  observed      instrument_llamaindex() detached (GraphMind enabled, no hub): the root-dispatcher handler only
  detached      instrument_llamaindex() + gate_llm + gate_tools, detached: one gated node per call
  openinference LlamaIndexInstrumentor with an in-memory span exporter (SimpleSpanProcessor)

Each variant's handler is on the root dispatcher only during its own turn; rounds interleave the
variants, so a busy machine slows all of them alike. Prints the median batch per variant (and the
best batch), each variant's overhead over bare and that overhead as a fraction of openinference's.
Target (issue 15): detached <= 0.10 of openinference's overhead.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.tools import FunctionTool

import graphmind
from graphmind_llamaindex import gate_llm, gate_tools, instrument_llamaindex, uninstrument_llamaindex
from graphmind_llamaindex.testing import ScriptedFunctionCallingLLM

MESSAGES = [
    ChatMessage(role="system", content="You plan trips."),
    ChatMessage(role="user", content="Plan a day in Cairo"),
]
REPLY = "Visit the pyramids at Giza, then the Egyptian Museum and Khan el-Khalili."
CLOCK = time.perf_counter_ns


def search(query: str) -> str:
    """Search the travel guide."""
    return f"results for {query}"


class Subject:
    """One variant's LLM and tool, and how to switch its instrumentation on and off."""

    def __init__(self, on: Callable[[], None] = lambda: None, off: Callable[[], None] = lambda: None) -> None:
        self.llm = ScriptedFunctionCallingLLM(
            default=REPLY, usage={"prompt_tokens": 12, "completion_tokens": 18}
        )
        self.tool = FunctionTool.from_defaults(search)
        self.on, self.off = on, off
        self.n = 0

    def chat(self) -> Any:
        self.llm.calls.clear()  # the scripted LLM keeps every call's messages; keep memory flat
        return self.llm.chat(MESSAGES)

    def call(self) -> Any:
        self.n += (
            1  # distinct arguments, as in an agent (identical ones in a row are a loop to the loop guard)
        )
        return self.tool.call(query=f"cairo {self.n}")


def batch_us(fn: Callable[[], Any], calls: int) -> float:
    start = CLOCK()
    for _ in range(calls):
        fn()
    return (CLOCK() - start) / calls / 1000


def openinference_subject() -> Subject | None:
    try:
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError as exc:
        print(f"openinference-instrumentation-llama-index is not installed ({exc}); its row is skipped")
        return None
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LlamaIndexInstrumentor()

    def on() -> None:
        instrumentor.instrument(tracer_provider=provider)

    def off() -> None:
        instrumentor.uninstrument()
        exporter.clear()

    subject = Subject(on, off)
    on()
    try:
        subject.chat()
        subject.call()
        spans = len(exporter.get_finished_spans())
    finally:
        off()
    if spans < 2:
        print(
            f"openinference recorded {spans} spans for 2 calls with this llama-index-core; its row is skipped"
        )
        return None
    return subject


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--cpu", action="store_true", help="time the calling thread's CPU (thread_time) instead of wall time"
    )
    args = parser.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.thread_time_ns

    client = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)
    detached = Subject(lambda: instrument_llamaindex(client), uninstrument_llamaindex)
    gate_llm(detached.llm, session=client)
    gate_tools(detached.tool, session=client)
    subjects: dict[str, Subject] = {
        "bare": Subject(),
        "observed": Subject(lambda: instrument_llamaindex(client), uninstrument_llamaindex),
        "detached": detached,
    }
    oi = openinference_subject()
    if oi is not None:
        subjects["openinference"] = oi
    shapes = {"chat": Subject.chat, "tool": Subject.call}
    samples: dict[str, dict[str, list[float]]] = {name: {shape: [] for shape in shapes} for name in subjects}
    for round_ in range(args.rounds + 1):
        for name, subject in subjects.items():
            subject.on()
            try:
                for shape, method in shapes.items():
                    value = batch_us(lambda s=subject, m=method: m(s), args.calls)
                    if round_:  # round 0 warms up
                        samples[name][shape].append(value)
            finally:
                subject.off()
    stats = client.stats()
    client.dispose()
    medians = {
        name: {shape: statistics.median(v) for shape, v in per.items()} for name, per in samples.items()
    }
    best = {name: {shape: min(v) for shape, v in per.items()} for name, per in samples.items()}
    print(f"{args.rounds} interleaved rounds of {args.calls} calls per variant and shape")
    for title, results in (("median batch", medians), ("best batch", best)):
        print(
            f"\n{title:<15}{'chat µs':>10}{'overhead':>10}{'vs OI':>8}{'tool µs':>10}{'overhead':>10}{'vs OI':>8}"
        )
        for name, row in results.items():
            cells = [f"{name:<15}"]
            for shape in shapes:
                over = row[shape] - results["bare"][shape]
                cells.append(f"{row[shape]:>10.1f}")
                cells.append(f"{over:>+10.1f}" if name != "bare" else f"{'':>10}")
                if name not in ("bare", "openinference") and "openinference" in results:
                    oi_over = results["openinference"][shape] - results["bare"][shape]
                    cells.append(f"{over / oi_over:>8.2f}" if oi_over > 0 else f"{'n/a':>8}")
                else:
                    cells.append(f"{'':>8}")
            print("".join(cells))
    print(f"graphmind events recorded (detached, to the replay buffer): {stats.get('events')}")
    print("\ntarget: detached <= 0.10 of openinference's overhead")


if __name__ == "__main__":
    main()
