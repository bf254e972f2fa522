"""Per-kickoff overhead of graphmind-crewai, next to OpenInference's CrewAI instrumentation.

    uv run nox -s crewai_bench -- [--calls 10] [--rounds 7] [--cpu]

CrewAI cannot share the workspace's environment (it pins openai<3; docs/crewai.md), so this runs in
the `crewai_bench` nox session, which installs CrewAI's own pins with the workspace's core, server
and openai packages and `openinference-instrumentation-crewai`.

One process, the provider a loopback `FakeOpenAI` (no network): a crew of one agent with one
`@tool`, whose first step asks for the tool and whose second answers; per kickoff one task, two
model requests and one tool call (CrewAI's own kickoff, Flow and event bus are most of it). Variants:

  bare          CrewAI alone
  detached      instrument_crewai(), GraphMind enabled, no hub
  attached      instrument_crewai() attached to the real hub (a subprocess), no breakpoint
  openinference CrewAIInstrumentor (openinference-instrumentation-crewai) exporting spans to memory

Each variant patches CrewAI process-wide, so each is on only for its own turn; rounds interleave
the variants (shuffled each round). Prints the best and the median batch per variant, each
variant's overhead over bare and that overhead as a fraction of openinference's.
Target: detached <= 0.25 of openinference's overhead.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

os.environ["HOME"] = tempfile.mkdtemp(prefix="gm-bench-crewai-home-")  # CrewAI writes there at import
os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
os.environ.setdefault("OTEL_SDK_DISABLED", "false")  # the openinference variant exports in memory

sys.path.insert(0, os.path.dirname(__file__))

from _harness import (
    AttachedHub,
    Variant,
    interleaved_rounds,
    noop,
    openinference_toggle,
    print_median_ratios,
    print_paired_ratios,
    print_ratio_table,
    summarise,
)
from crewai import LLM, Agent, Crew, Task
from crewai.tools import tool

import graphmind
from graphmind_crewai import instrument_crewai, uninstrument_crewai
from graphmind_openai.testing import FakeOpenAI


def reply(body: dict[str, Any]) -> Any:
    if any(m.get("role") == "tool" for m in body["messages"]):
        return "Cairo: the museums, then koshary."
    return {
        "content": None,
        "tool_calls": [{"id": "call_1", "name": "lookup", "arguments": '{"topic": "cairo"}'}],
    }


@tool("lookup")
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


def make_crew(fake: FakeOpenAI) -> Crew:
    llm = LLM(model="openai/gpt-4o-mini", base_url=fake.base_url, api_key="bench")
    agent = Agent(role="planner", goal="plan", backstory="b", tools=[lookup], llm=llm, verbose=False)
    return Crew(agents=[agent], tasks=[Task(description="Plan Cairo", expected_output="a plan", agent=agent)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10, help="kickoffs per batch")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--cpu", action="store_true", help="time the calling thread's CPU (thread_time) instead of wall time"
    )
    args = parser.parse_args()
    clock = time.thread_time_ns if args.cpu else time.perf_counter_ns

    with FakeOpenAI(default_reply=reply) as fake:
        crew = make_crew(fake)

        def kickoff() -> Any:
            return crew.kickoff()

        assert kickoff().raw.startswith("Cairo"), "the bench's crew does not answer"
        hub = AttachedHub("gm-bench-crewai-")
        detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)
        try:

            def on(session: graphmind.Client) -> Any:
                return lambda: instrument_crewai(session=session)

            variants: dict[str, Variant] = {
                "bare": (noop, noop, {"kickoff": kickoff}),
                "detached": (on(detached), uninstrument_crewai, {"kickoff": kickoff}),
                "attached": (on(hub.client), uninstrument_crewai, {"kickoff": kickoff}),
            }
            oi = openinference_toggle(
                "openinference-instrumentation-crewai",
                "openinference.instrumentation.crewai",
                "CrewAIInstrumentor",
                kickoff,
                1,
                "crewai",
            )
            if oi is not None:
                variants["openinference"] = (*oi, {"kickoff": kickoff})
            samples = interleaved_rounds(variants, args.rounds, args.calls, clock)
            stats = {"detached": detached.stats(), "attached": hub.client.stats()}
        finally:
            detached.dispose()
            hub.close()
    best, medians = summarise(samples)
    print(
        f"{args.rounds} interleaved rounds of {args.calls} kickoffs per variant "
        "(1 task, 2 model requests, 1 tool call each)"
    )
    print_ratio_table("best batch", best, medians=medians)
    print_median_ratios(medians)
    print_paired_ratios(samples)
    for name, s in stats.items():
        print(f"graphmind {name}: {s.get('events')} events, {s.get('dropped', 0)} dropped")
    print("\ntarget: detached <= 0.25 of openinference's overhead")


if __name__ == "__main__":
    main()
