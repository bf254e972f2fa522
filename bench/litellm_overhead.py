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
import time
from collections.abc import Callable
from typing import Any

import litellm
from _harness import Toggle, Variant, interleaved_rounds, openinference_toggle, print_ratio_table, summarise

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


def openinference_toggle_litellm() -> Toggle | None:
    return openinference_toggle(
        "openinference-instrumentation-litellm",
        "openinference.instrumentation.litellm",
        "LiteLLMInstrumentor",
        plain,
        1,
        "this litellm version",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--wall", action="store_true", help="time wall-clock time instead of the calling thread's CPU time"
    )
    args = parser.parse_args()
    clock_ns = time.perf_counter_ns if args.wall else time.thread_time_ns

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
    oi = openinference_toggle_litellm()
    if oi is not None:
        toggles["openinference"] = oi
    shapes = {"plain": plain, "stream": streamed}
    # each variant is on only for its own turn (they all patch the same module)
    variants: dict[str, Variant] = {name: (on, off, shapes) for name, (on, off) in toggles.items()}
    samples = interleaved_rounds(variants, args.rounds, args.calls, clock_ns)
    stats = session.stats()
    session.dispose()

    best, medians = summarise(samples)
    import importlib.metadata

    clock = "wall" if args.wall else "thread CPU"
    print(
        f"litellm {importlib.metadata.version('litellm')}; {args.rounds} interleaved rounds of {args.calls} calls; {clock} µs per call, best batch (median)"
    )
    print_ratio_table("variant", best, medians=medians, digits=3)
    print(
        f"\nGraphMind events recorded detached: {stats['events']} (the replay buffer keeps the newest {stats['buffered']})"
    )


if __name__ == "__main__":
    main()
