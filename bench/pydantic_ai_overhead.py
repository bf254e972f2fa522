"""Per-run overhead of graphmind-pydantic-ai, next to OpenInference's Pydantic AI instrumentation.

    uv run python bench/pydantic_ai_overhead.py [--calls 50] [--rounds 15] [--cpu]
    uv run python bench/pydantic_ai_overhead.py --count   # function calls per run (cProfile), deterministic

One process, no network: `await agent.run(...)` of a real `Agent` on a `FunctionModel` whose
first step asks for two `search` calls (run together) and whose second step answers: per run two
model requests and two tool calls, what is measured is Pydantic AI's own graph plus the
instrumentation. Variants:

  bare          Pydantic AI alone
  detached      instrument_pydantic_ai(agent), GraphMind enabled, no hub
  capability    the agent built with `capabilities=[GraphmindCapability()]`, no hub: the same
                hooks on the agent's own capability rather than one added to each run
  attached      instrument_pydantic_ai(agent) attached to the real hub (a subprocess), no breakpoint
  floor         the same three capability hooks doing nothing (a pass-through wrap_run, a bare
                WrapperModel per attempt, a pass-through wrap_tool_execute), added per run as
                instrument_pydantic_ai adds its capability: what Pydantic AI itself charges for any
                capability on these hooks; detached minus floor is GraphMind's own share
  empty         a capability overriding nothing, added per run: the framework's price for a run
                capability at all (every hook dispatched to it, the run's capabilities combined)
  empty_agent   the same capability given to the agent's constructor (combined once, not per run)
  openinference Pydantic AI's own OpenTelemetry instrumentation (`Agent.instrument_all`) with
                `openinference-instrumentation-pydantic-ai`'s OpenInferenceSpanProcessor and an
                in-memory exporter (SimpleSpanProcessor): how OpenInference observes Pydantic AI

`--count` runs each variant alone under cProfile and prints the Python function calls per run
(builtins included) and their difference from bare: the same on every machine and every load, so
it shows what a change saves where the timings of a shared machine cannot.

Rounds interleave the variants (shuffled each round), in one process and one event loop, so a busy
machine slows all of them alike. Prints the best and the median batch per variant, each variant's
overhead over bare and that overhead as a fraction of openinference's.
Target (issue 33): detached <= 0.25 of openinference's overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import tempfile
import time
from collections.abc import Callable
from typing import Any

from _harness import Variant, interleaved_rounds, noop, print_ratio_table, summarise
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel

import graphmind
from graphmind_pydantic_ai import GraphmindCapability, instrument_pydantic_ai


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if not returns:
        prompt = str(messages[0].parts[-1].content)  # type: ignore[union-attr]
        return ModelResponse(
            parts=[
                ToolCallPart("search", {"q": f"{prompt} museums"}, tool_call_id="call_a"),
                ToolCallPart("search", {"q": f"{prompt} food"}, tool_call_id="call_b"),
            ]
        )
    return ModelResponse(parts=[TextPart("Visit " + " and ".join(str(r.content) for r in returns))])


def make_agent(capabilities: list[AbstractCapability[Any]] | None = None) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(model), name="planner", capabilities=capabilities)

    @agent.tool_plain
    def search(q: str) -> str:
        """Search the travel guide."""
        return f"results for {q}"

    return agent


class Empty(AbstractCapability[Any]):
    """A capability that overrides nothing."""


class Floor(AbstractCapability[Any]):
    """The hooks GraphmindCapability overrides, passing straight through."""

    async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
        return await handler()

    def get_wrapper_model(self, model: Model) -> Model | None:
        return WrapperModel(model)

    async def wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any) -> Any:
        return await handler(args)


def openinference() -> tuple[Callable[[], None], Callable[[], None]] | None:
    try:
        from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from pydantic_ai.models.instrumented import InstrumentationSettings
    except ImportError as exc:
        print(f"openinference-instrumentation-pydantic-ai is not installed ({exc}); its row is skipped")
        return None
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(OpenInferenceSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = InstrumentationSettings(tracer_provider=provider)

    def on() -> None:
        Agent.instrument_all(settings)

    def off() -> None:
        Agent.instrument_all(False)
        exporter.clear()

    return on, off


def count_calls(variants: dict[str, Variant], runner: asyncio.Runner, calls: int) -> None:
    """Each variant alone, warmed up, then `calls` runs under cProfile: function calls per run."""
    counts: dict[str, float] = {}
    for name, (on, off, cells) in variants.items():
        run = cells["run"]
        on()
        try:
            for _ in range(5):
                run()
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(calls):
                run()
            profile.disable()
        finally:
            off()
        counts[name] = pstats.Stats(profile).total_calls / calls  # type: ignore[attr-defined]
    bare = counts["bare"]
    oi = counts.get("openinference", bare) - bare
    print(f"function calls per run ({calls} runs per variant, cProfile, builtins included)")
    for name, count in counts.items():
        extra = count - bare
        ratio = (
            f"  {extra / oi:.2f} of openinference's"
            if oi > 0 and name not in ("bare", "openinference")
            else ""
        )
        print(f"  {name:13} {count:9.0f} {extra:+8.0f}{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50, help="runs per batch")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--count", action="store_true", help="function calls per run (cProfile) instead of times"
    )
    parser.add_argument(
        "--cpu", action="store_true", help="time the calling thread's CPU (thread_time) instead of wall time"
    )
    args = parser.parse_args()
    clock = time.thread_time_ns if args.cpu else time.perf_counter_ns

    from graphmind_server.testing import HubProcess

    runner = asyncio.Runner()
    n = 0

    def one_run(agent: Agent[None, str], capabilities: Any = None) -> Callable[[], Any]:
        def run() -> Any:
            nonlocal n
            n += 1  # distinct prompts, as an app's
            return runner.run(agent.run(f"Cairo {n}", capabilities=capabilities))

        return run

    with HubProcess(tempfile.mkdtemp(prefix="gm-bench-") + "/hub.db") as hub:
        detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)
        attached = graphmind.Client(app="bench", url=hub.ingest_url)
        if not attached.ready(5):
            raise SystemExit("the hub did not attach")
        variants: dict[str, Variant] = {
            "bare": (noop, noop, {"run": one_run(make_agent())}),
            "detached": (
                noop,
                noop,
                {"run": one_run(instrument_pydantic_ai(make_agent(), session=detached))},
            ),
            "attached": (
                noop,
                noop,
                {"run": one_run(instrument_pydantic_ai(make_agent(), session=attached))},
            ),
            "capability": (
                noop,
                noop,
                {"run": one_run(make_agent([GraphmindCapability(session=detached)]))},
            ),
            "floor": (noop, noop, {"run": one_run(make_agent(), [Floor()])}),
            "empty": (noop, noop, {"run": one_run(make_agent(), [Empty()])}),
            "empty_agent": (noop, noop, {"run": one_run(make_agent([Empty()]))}),
        }
        oi = openinference()
        if oi is not None:
            variants["openinference"] = (*oi, {"run": one_run(make_agent())})
        check = runner.run(make_agent().run("Cairo"))
        assert check.output.startswith("Visit results for Cairo"), check.output
        if args.count:
            count_calls(variants, runner, args.calls)
            detached.dispose()
            attached.dispose()
            runner.close()
            return
        samples = interleaved_rounds(variants, args.rounds, args.calls, clock)
        stats = {"detached": detached.stats(), "attached": attached.stats()}
        detached.dispose()
        attached.dispose()
    runner.close()
    best, medians = summarise(samples)
    print(
        f"{args.rounds} interleaved rounds of {args.calls} runs per variant (2 model requests, 2 tool calls each)"
    )
    print_ratio_table("best batch", best, medians=medians)
    for name, s in stats.items():
        print(f"graphmind {name}: {s.get('events')} events, {s.get('dropped', 0)} dropped")
    floor = best["floor"]["run"]
    print(
        f"GraphMind's own share of detached (detached - floor): {best['detached']['run'] - floor:+.1f} µs per run"
    )
    print("\ntarget: detached <= 0.25 of openinference's overhead")


if __name__ == "__main__":
    main()
