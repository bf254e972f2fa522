"""Per-invocation overhead of graphmind-google-adk, next to openinference-instrumentation-google-adk.

    uv run python bench/google_adk_overhead.py [--calls 20] [--rounds 11] [--wall]

One process, no network: each "call" is one ADK invocation (`Runner.run_async` read to the end, on
one event loop) of an LlmAgent whose model is a scripted `BaseLlm`: `tool` = the model asks for a
FunctionTool, then answers with its result (two model steps, one tool call, one agent: what an
agent does); `text` = one model step that answers at once. Variants, interleaved round by round
(shuffled) so a busy machine slows all of them alike:

  bare           ADK alone
  detached       instrument_runner(runner): GraphmindPlugin, GraphMind enabled, no hub (events go to the replay buffer)
  openinference  GoogleADKInstrumentor with an in-memory span exporter (SimpleSpanProcessor)

Time is the calling thread's CPU time (`time.thread_time_ns`; the event loop runs on it) unless
`--wall`. Prints the best batch per variant (median in brackets), each overhead over bare, and that
overhead as a fraction of openinference's. Target (issue 35): detached <= 0.25 x openinference's overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import time
from collections.abc import AsyncGenerator, Callable

from _harness import Variant, interleaved_rounds, openinference_toggle, print_ratio_table, summarise
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

import graphmind
from graphmind_google_adk import instrument_runner, uninstrument_runner


class Scripted(BaseLlm):
    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1].parts or []
        if any(p.function_response for p in last):
            part = types.Part(text="It is clear in Cairo.")
        elif "weather" in (last[0].text or ""):
            part = types.Part(function_call=types.FunctionCall(name="weather", args={"city": "Cairo"}))
        else:
            part = types.Part(text="Hello.")
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=12, candidates_token_count=5, total_token_count=17
        )
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


def weather(city: str) -> dict[str, str]:
    """The weather in a city."""
    return {"city": city, "sky": "clear"}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of thread CPU time")
    args = parser.parse_args()
    clock_ns = time.perf_counter_ns if args.wall else time.thread_time_ns

    loop = asyncio.new_event_loop()
    agent = LlmAgent(name="assistant", model=Scripted(), tools=[weather], instruction="Be brief.")
    runner = Runner(
        app=App(name="bench", root_agent=agent),
        session_service=InMemorySessionService(),  # type: ignore[no-untyped-call]
        auto_create_session=True,
    )
    counter = {"n": 0}

    def invoke(text: str) -> Callable[[], int]:
        async def once() -> int:
            counter["n"] += 1  # a fresh session per call: the transcript does not grow across calls
            message = types.Content(role="user", parts=[types.Part(text=text)])
            events = 0
            async for _ in runner.run_async(user_id="u", session_id=f"s{counter['n']}", new_message=message):
                events += 1
            return events

        return lambda: loop.run_until_complete(once())

    shapes = {"tool": invoke("weather in Cairo?"), "text": invoke("hi")}
    session = graphmind.Client(
        app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60
    )  # never attaches
    variants: dict[str, Variant] = {
        "bare": (lambda: None, lambda: None, shapes),
        "detached": (
            lambda: instrument_runner(runner, session=session),
            lambda: uninstrument_runner(runner),
            shapes,
        ),
    }
    oi = openinference_toggle(
        "openinference-instrumentation-google-adk",
        "openinference.instrumentation.google_adk",
        "GoogleADKInstrumentor",
        shapes["tool"],
        1,
        "this google-adk version",
    )
    if oi is not None:
        variants["openinference"] = (*oi, shapes)
    samples = interleaved_rounds(variants, args.rounds, args.calls, clock_ns)
    stats = session.stats()
    session.dispose()
    loop.close()

    best, medians = summarise(samples)
    clock = "wall" if args.wall else "thread CPU"
    print(
        f"google-adk {importlib.metadata.version('google-adk')}; {args.rounds} interleaved rounds of {args.calls} "
        f"invocations; {clock} µs per invocation, best batch (median)"
    )
    print_ratio_table("variant", best, medians=medians, digits=3)
    print(f"\nGraphMind events recorded detached: {stats['events']}")


if __name__ == "__main__":
    main()
