"""Per-invocation overhead of graphmind-google-adk, next to openinference-instrumentation-google-adk.

    uv run python bench/google_adk_overhead.py [--calls 20] [--rounds 11] [--wall]

One process, no network: each "call" is one ADK invocation (`Runner.run_async` read to the end, on
one event loop) of an LlmAgent whose model is a scripted `BaseLlm`: `tool` = the model asks for a
FunctionTool, then answers with its result (two model steps, one tool call, one agent: what an
agent does); `text` = one model step that answers at once. Variants, interleaved round by round
(shuffled) so a busy machine slows all of them alike:

  bare           ADK alone
  floor          a plugin whose twelve callbacks return None at once, and the plugin manager's
                 `_run_callbacks` passed through (the two things instrument_runner adds): what ADK
                 charges for any plugin on these points; detached minus floor is GraphMind's own share
  detached       instrument_runner(runner): GraphmindPlugin, GraphMind enabled, no hub (events go to the replay buffer)
  attached       the same, attached to the real hub (a subprocess), no breakpoint
  openinference  GoogleADKInstrumentor with an in-memory span exporter (SimpleSpanProcessor)

Time is the calling thread's CPU time (`time.thread_time_ns`; the event loop runs on it) unless
`--wall`. Prints the best batch per variant (median in brackets), each overhead over bare, and that
overhead as a fraction of openinference's, for the best and the median batches, and the paired
ratio (the median over rounds of each round's overhead over bare, `_harness.print_paired_ratios`).
Targets (issue 37): detached <= 0.25 x openinference's overhead, attached <= 0.35 x.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any

from _harness import (
    AttachedHub,
    Toggle,
    Variant,
    interleaved_rounds,
    noop,
    openinference_toggle,
    print_median_ratios,
    print_paired_ratios,
    print_ratio_table,
    summarise,
)
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
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


def make_runner() -> Runner:
    agent = LlmAgent(name="assistant", model=Scripted(), tools=[weather], instruction="Be brief.")
    return Runner(
        app=App(name="bench", root_agent=agent),
        session_service=InMemorySessionService(),  # type: ignore[no-untyped-call]
        auto_create_session=True,
    )


def invocation(runner: Runner, loop: asyncio.AbstractEventLoop, text: str) -> Callable[[], int]:
    """One invocation of `runner` on `loop` with the user message `text`, in a fresh session."""
    counter = {"n": 0}

    async def once() -> int:
        counter["n"] += 1  # a fresh session per call: the transcript does not grow across calls
        session_id = f"{text}{counter['n']}"
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = 0
        async for _ in runner.run_async(user_id="u", session_id=session_id, new_message=message):
            events += 1
        # and deleted after it: thousands of kept sessions would grow the heap (and each garbage
        # collection) through the run, a drift the interleaved variants do not share alike
        await runner.session_service.delete_session(
            app_name=runner.app_name, user_id="u", session_id=session_id
        )
        return events

    return lambda: loop.run_until_complete(once())


class FloorPlugin(BasePlugin):
    """Every callback GraphmindPlugin implements, returning None at once."""

    def __init__(self) -> None:
        super().__init__("floor")

    async def before_run_callback(self, **kwargs: Any) -> None:
        return None

    async def after_run_callback(self, **kwargs: Any) -> None:
        return None

    async def on_run_error_callback(self, **kwargs: Any) -> None:
        return None

    async def before_agent_callback(self, **kwargs: Any) -> None:
        return None

    async def after_agent_callback(self, **kwargs: Any) -> None:
        return None

    async def on_agent_error_callback(self, **kwargs: Any) -> None:
        return None

    async def before_model_callback(self, **kwargs: Any) -> None:
        return None

    async def after_model_callback(self, **kwargs: Any) -> None:
        return None

    async def on_model_error_callback(self, **kwargs: Any) -> None:
        return None

    async def before_tool_callback(self, **kwargs: Any) -> None:
        return None

    async def after_tool_callback(self, **kwargs: Any) -> None:
        return None

    async def on_tool_error_callback(self, **kwargs: Any) -> None:
        return None

    @staticmethod
    def toggle(runner: Runner) -> Toggle:
        """(on, off): the floor plugin registered on `runner` and `_run_callbacks` passed through."""
        manager = runner.plugin_manager
        plugin = FloorPlugin()
        original = type(manager)._run_callbacks

        async def _run_callbacks(callback_name: Any, **kwargs: Any) -> Any:
            try:
                return await original(manager, callback_name, **kwargs)
            except RuntimeError:
                raise

        def on() -> None:
            manager.plugins.append(plugin)
            manager._run_callbacks = _run_callbacks  # type: ignore[method-assign]

        def off() -> None:
            manager.plugins.remove(plugin)
            del manager._run_callbacks

        return on, off


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of thread CPU time")
    parser.add_argument("--no-attached", action="store_true", help="skip the attached variant (no hub)")
    args = parser.parse_args()
    clock_ns = time.perf_counter_ns if args.wall else time.thread_time_ns

    loop = asyncio.new_event_loop()
    runner = make_runner()
    shapes = {"tool": invocation(runner, loop, "weather in Cairo?"), "text": invocation(runner, loop, "hi")}
    session = graphmind.Client(
        app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60
    )  # never attaches
    variants: dict[str, Variant] = {
        "bare": (noop, noop, shapes),
        "floor": (*FloorPlugin.toggle(runner), shapes),
        "detached": (
            lambda: instrument_runner(runner, session=session),
            lambda: uninstrument_runner(runner),
            shapes,
        ),
    }
    hub = None if args.no_attached else AttachedHub()
    attached = hub.client if hub is not None else None
    if hub is not None:
        on_hub = hub.client
        variants["attached"] = (
            lambda: instrument_runner(runner, session=on_hub),
            lambda: uninstrument_runner(runner),
            shapes,
        )
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
    try:
        samples = interleaved_rounds(variants, args.rounds, args.calls, clock_ns)
    finally:
        stats = {"detached": session.stats(), **({"attached": attached.stats()} if attached else {})}
        session.dispose()
        if hub is not None:
            hub.close()
        loop.close()

    best, medians = summarise(samples)
    clock = "wall" if args.wall else "thread CPU"
    print(
        f"google-adk {importlib.metadata.version('google-adk')}; {args.rounds} interleaved rounds of {args.calls} "
        f"invocations; {clock} µs per invocation, best batch (median)"
    )
    print_ratio_table("variant", best, medians=medians, digits=3)
    print_median_ratios(medians)
    print_paired_ratios(samples)
    for name, s in stats.items():
        print(f"GraphMind {name}: {s.get('events')} events, {s.get('dropped', 0)} dropped")
    print("\ntargets (issue 37): detached <= 0.25 of openinference's overhead, attached <= 0.35")


if __name__ == "__main__":
    main()
