"""Per-invocation overhead of graphmind-strands, next to Strands' own OpenTelemetry spans.

    uv run python bench/strands_overhead.py [--calls 50] [--rounds 15] [--cpu]

One process, no network: `await agent.invoke_async(...)` of a real Strands `Agent` on a scripted
`Model` (Strands' stream events, in process) whose first call asks for two `search` calls and whose
second answers: per invocation two model calls and two tool executions, what is measured is
Strands' own event loop plus the instrumentation. The agent's history is cleared before each
invocation (as a fresh conversation), so every invocation is the same size. Variants:

  bare      Strands alone (its tracer on the no-op provider, as without an OpenTelemetry setup)
  detached  the agent given a `GraphmindHooks` (instrument_agent), GraphMind enabled, no hub
  attached  the same, attached to the real hub (a subprocess), no breakpoint
  otel      Strands' own spans turned on (its tracer on an SDK TracerProvider with a
            SimpleSpanProcessor and an in-memory exporter): how Strands observes itself

Rounds interleave the variants (shuffled each round), in one process and one event loop, so a busy
machine slows all of them alike. Prints the best and the median batch per variant, each overhead
over bare and that overhead as a fraction of otel's. Target: detached <= 0.25 of otel's overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OTEL_SDK_DISABLED", "false")

from _harness import (
    Variant,
    interleaved_rounds,
    noop,
    print_median_ratios,
    print_paired_ratios,
    print_ratio_table,
    summarise,
)
from strands import Agent, tool
from strands.models import Model
from strands.telemetry.tracer import get_tracer

import graphmind
from graphmind_strands import instrument_agent


class Scripted(Model):
    """Asks for two `search` calls, then answers with what they returned."""

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {"model_id": "scripted"}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> Any:
        results = [b["toolResult"] for m in messages for b in m["content"] if "toolResult" in b]
        yield {"messageStart": {"role": "assistant"}}
        if not results:
            prompt = messages[0]["content"][0]["text"]
            for call, q in (("call_a", f"{prompt} museums"), ("call_b", f"{prompt} food")):
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": call, "name": "search"}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"q": q})}}}}
                yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        text = "Visit " + " and ".join(r["content"][0]["text"] for r in results)
        for word in text.split(" "):
            yield {"contentBlockDelta": {"delta": {"text": word + " "}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        yield {
            "metadata": {
                "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
                "metrics": {"latencyMs": 1},
            }
        }


@tool
def search(q: str) -> str:
    """Search the travel guide.

    Args:
        q: what to look for
    """
    return f"results for {q}"


def make_agent() -> Agent:
    return Agent(model=Scripted(), tools=[search], name="planner", callback_handler=None)


def otel() -> tuple[Callable[[], None], Callable[[], None]]:
    """Strands' tracer (strands/telemetry/tracer.py: one per process, `get_tracer()`) on an SDK
    provider while the variant runs, back on the no-op one after."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    strands_tracer = get_tracer()
    noop_tracer = strands_tracer.tracer

    def on() -> None:
        strands_tracer.tracer = provider.get_tracer(strands_tracer.service_name)

    def off() -> None:
        strands_tracer.tracer = noop_tracer
        exporter.clear()

    return on, off


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50, help="invocations per batch")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--cpu", action="store_true", help="time the calling thread's CPU (thread_time) instead of wall time"
    )
    args = parser.parse_args()
    clock = time.thread_time_ns if args.cpu else time.perf_counter_ns

    from graphmind_server.testing import HubProcess

    # run_until_complete, not asyncio.Runner.run: on 3.11 Runner.run's SIGINT dance formats the repr
    # of the finished task, result included, and a Strands result grows with every invocation of its
    # agent (its metrics keep each one): by the last round that repr cost more than the invocation.
    loop = asyncio.new_event_loop()
    n = 0

    def one_run(agent: Agent) -> Callable[[], Any]:
        def run() -> Any:
            nonlocal n
            n += 1  # distinct prompts, as an app's
            agent.messages.clear()  # a fresh conversation each time: every invocation the same size
            return loop.run_until_complete(agent.invoke_async(f"Cairo {n}"))

        return run

    with HubProcess(tempfile.mkdtemp(prefix="gm-bench-") + "/hub.db") as hub:
        detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)
        attached = graphmind.Client(app="bench", url=hub.ingest_url)
        if not attached.ready(5):
            raise SystemExit("the hub did not attach")
        variants: dict[str, Variant] = {
            "bare": (noop, noop, {"run": one_run(make_agent())}),
            "detached": (noop, noop, {"run": one_run(instrument_agent(make_agent(), session=detached))}),
            "attached": (noop, noop, {"run": one_run(instrument_agent(make_agent(), session=attached))}),
            "otel": (*otel(), {"run": one_run(make_agent())}),
        }
        check = one_run(make_agent())()
        assert str(check).startswith("Visit results for Cairo"), str(check)
        samples = interleaved_rounds(variants, args.rounds, args.calls, clock)
        stats = {"detached": detached.stats(), "attached": attached.stats()}
        detached.dispose()
        attached.dispose()
    loop.close()
    best, medians = summarise(samples)
    print(
        f"{args.rounds} interleaved rounds of {args.calls} invocations per variant (2 model calls, 2 tools each)"
    )
    print_ratio_table("best batch", best, medians=medians, peer="otel")
    print_median_ratios(medians, peer="otel")
    print_paired_ratios(samples, peer="otel")
    for name, s in stats.items():
        print(f"graphmind {name}: {s.get('events')} events, {s.get('dropped', 0)} dropped")
    print("\ntarget: detached <= 0.25 of otel's overhead")


if __name__ == "__main__":
    main()
