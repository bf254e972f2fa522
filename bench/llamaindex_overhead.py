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
import functools
import time
from collections.abc import Callable
from typing import Any

from _harness import Variant, interleaved_rounds, openinference_toggle, print_ratio_table, summarise
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


def openinference_subject() -> Subject | None:
    def probe() -> None:
        subject = Subject()
        subject.chat()
        subject.call()

    toggle = openinference_toggle(
        "openinference-instrumentation-llama-index",
        "openinference.instrumentation.llama_index",
        "LlamaIndexInstrumentor",
        probe,
        2,
        "this llama-index-core",
    )
    return None if toggle is None else Subject(*toggle)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--cpu", action="store_true", help="time the calling thread's CPU (thread_time) instead of wall time"
    )
    args = parser.parse_args()
    clock = time.thread_time_ns if args.cpu else time.perf_counter_ns

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
    # Each variant's handler is on the root dispatcher only during its own turn.
    variants: dict[str, Variant] = {
        name: (subject.on, subject.off, {shape: functools.partial(m, subject) for shape, m in shapes.items()})
        for name, subject in subjects.items()
    }
    samples = interleaved_rounds(variants, args.rounds, args.calls, clock)
    stats = client.stats()
    client.dispose()
    best, medians = summarise(samples)
    print(f"{args.rounds} interleaved rounds of {args.calls} calls per variant and shape")
    for title, results in (("median batch", medians), ("best batch", best)):
        print_ratio_table(title, results)
    print(f"graphmind events recorded (detached, to the replay buffer): {stats.get('events')}")
    print("\ntarget: detached <= 0.10 of openinference's overhead")


if __name__ == "__main__":
    main()
