"""Per-run overhead of graphmind-openai-agents, next to openinference-instrumentation-openai-agents.

    uv run python bench/openai_agents_overhead.py [--calls 50] [--rounds 15]

One process, no network: each call is one `Runner.run` of an agent with one function tool on an
in-process model (a `Model` subclass answering a tool call, then text, with no I/O), so what is
measured is the SDK's run loop and the instrumentation around it: per run, two model calls, one
tool call, one handoff-free turn pair. Two shapes: `Runner.run` awaited, and `Runner.run_streamed`
read to its end. Variants, interleaved round by round (same process) so a busy machine slows all alike:

  bare           the SDK alone
  floor          the same hook points as instrument_openai_agents() (every row of its HOOKS, and the
                 model's two methods), each a pass-through of the same kind (a coroutine function
                 awaiting the original, an async generator re-yielding the stream): what any hook
                 there costs; detached minus floor is GraphMind's own share
  detached       instrument_openai_agents() with GraphMind enabled and no hub (events go to the replay buffer)
  attached       the same, attached to the real hub (a subprocess), no breakpoint
  openinference  OpenAIAgentsInstrumentor (a trace processor) with an in-memory span exporter

The SDK's tracing is on for every variant (openinference reads its spans) with the SDK's own OpenAI
exporter removed (`set_trace_processors([])`), so no variant exports anything. Time is the calling
thread's CPU time unless `--wall`. Prints the best batch per variant (median in brackets), each
overhead over bare, and that overhead as a fraction of openinference's, for the best and the median
batches, and the paired ratio (the median over rounds of each round's overhead over bare,
`_harness.print_paired_ratios`). Targets (issue 37): detached <= 0.25 x openinference's overhead, attached <= 0.35 x.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

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
from agents import Agent, Runner, function_tool, set_trace_processors, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
)

import graphmind
from graphmind.adapter import Hook, Patches
from graphmind_openai_agents import instrument_openai_agents, uninstrument_openai_agents
from graphmind_openai_agents._hooks import HOOKS

REPLY = "Visit the pyramids at Giza, then the Egyptian Museum and Khan el-Khalili."


def _answered(items: Any) -> bool:
    return not isinstance(items, str) and any(
        isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
    )


def _output(answered: bool) -> list[Any]:
    if answered:
        text = ResponseOutputText(type="output_text", text=REPLY, annotations=[])
        return [
            ResponseOutputMessage(
                id="msg_1", type="message", role="assistant", status="completed", content=[text]
            )
        ]
    return [
        ResponseFunctionToolCall(
            id="fc_1", type="function_call", call_id="call_1", name="weather", arguments='{"city": "Cairo"}'
        )
    ]


class BenchModel(Model):
    """A model with no I/O: a tool call first, then the text reply."""

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        return ModelResponse(output=_output(_answered(input)), usage=Usage(requests=1), response_id=None)

    async def stream_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> AsyncIterator[Any]:
        answered = _answered(input)
        if answered:
            for i, word in enumerate(REPLY.split(" ")):
                yield ResponseTextDeltaEvent(
                    type="response.output_text.delta",
                    item_id="msg_1",
                    output_index=0,
                    content_index=0,
                    delta=word + " ",
                    sequence_number=i,
                    logprobs=[],
                )
        response = Response(
            id="resp_1",
            created_at=0.0,
            model="bench",
            object="response",
            output=_output(answered),
            parallel_tool_calls=True,
            tool_choice="auto",
            tools=[],
            status="completed",
        )
        yield ResponseCompletedEvent(type="response.completed", response=response, sequence_number=99)


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


AGENT = Agent(name="planner", instructions="You plan trips.", tools=[weather], model=BenchModel())


def _passes_async(original: Callable[..., Any], state: Any) -> Callable[..., Any]:
    async def passes(*args: Any, **kwargs: Any) -> Any:
        return await original(*args, **kwargs)

    return passes


def _passes_stream(original: Callable[..., Any], state: Any) -> Callable[..., Any]:
    def stream(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        return _restream(original(*args, **kwargs))

    return stream


async def _restream(inner: Any) -> AsyncIterator[Any]:
    try:
        async for event in inner:
            yield event
    finally:
        await inner.aclose()


class Floor:
    """Pass-through hooks on every point instrument_openai_agents() patches (module rows, and the
    two model methods of each model get_model returns, patched on the instance once)."""

    _MODEL_ROWS = (
        Hook("", "get_response", _passes_async, "", ""),
        Hook("", "stream_response", _passes_stream, "", ""),
    )

    def __init__(self) -> None:
        self.state = Patches()
        self.models: list[Patches] = []

    def _passes_get_model(self, original: Callable[..., Any], state: Any) -> Callable[..., Any]:
        def get_model(agent: Any, run_config: Any) -> Any:
            model = original(agent, run_config)
            if "get_response" not in vars(model):
                patches = Patches()
                patches.apply(model, self._MODEL_ROWS, patches)
                self.models.append(patches)
            return model

        return get_model

    def on(self) -> None:
        for owner, hook in HOOKS:
            wrap = self._passes_get_model if hook.attr == "get_model" else _passes_async
            self.state.apply(owner, (Hook(hook.target, hook.attr, wrap, "", ""),), self.state)

    def off(self) -> None:
        for patches in self.models:
            patches.undo()
        self.models.clear()
        self.state.undo()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--wall", action="store_true", help="time wall-clock time instead of thread CPU time")
    parser.add_argument("--no-attached", action="store_true", help="skip the attached variant (no hub)")
    args = parser.parse_args()
    clock_ns = time.perf_counter_ns if args.wall else time.thread_time_ns
    set_tracing_disabled(False)
    set_trace_processors([])  # the SDK's own exporter off: nothing leaves the process
    loop = asyncio.new_event_loop()

    def run() -> Any:
        result = loop.run_until_complete(Runner.run(AGENT, "Plan a day in Cairo"))
        assert result.final_output == REPLY
        return result

    async def read_streamed() -> Any:
        result = Runner.run_streamed(AGENT, "Plan a day in Cairo")
        async for _event in result.stream_events():
            pass
        return result

    def streamed() -> Any:
        result = loop.run_until_complete(read_streamed())
        assert result.final_output == REPLY
        return result

    session = graphmind.Client(
        app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60
    )  # never attaches
    shapes = {"run": run, "streamed": streamed}
    floor = Floor()
    variants: dict[str, Variant] = {
        "bare": (noop, noop, shapes),
        "floor": (floor.on, floor.off, shapes),
        "detached": (lambda: instrument_openai_agents(session=session), uninstrument_openai_agents, shapes),
    }
    hub = None if args.no_attached else AttachedHub()
    attached = hub.client if hub is not None else None
    if hub is not None:
        on_hub = hub.client
        variants["attached"] = (
            lambda: instrument_openai_agents(session=on_hub),
            uninstrument_openai_agents,
            shapes,
        )
    oi = openinference_toggle(
        "openinference-instrumentation-openai-agents",
        "openinference.instrumentation.openai_agents",
        "OpenAIAgentsInstrumentor",
        run,
        3,
        "this openai-agents version",
    )
    if oi is not None:
        variants["openinference"] = (oi[0], oi[1], shapes)
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
        f"openai-agents {importlib.metadata.version('openai-agents')}; {args.rounds} interleaved rounds of "
        f"{args.calls} runs (2 model calls + 1 tool each); {clock} µs per run, best batch (median)"
    )
    print_ratio_table("variant", best, medians=medians, digits=3)
    print_median_ratios(medians)
    print_paired_ratios(samples)
    for name, s in stats.items():
        print(f"GraphMind {name}: {s.get('events')} events, {s.get('dropped', 0)} dropped")
    print("\ntargets (issue 37): detached <= 0.25 of openinference's overhead, attached <= 0.35")


if __name__ == "__main__":
    main()
