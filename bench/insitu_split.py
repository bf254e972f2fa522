"""Where a detached call's overhead goes *inside* the real SDK call: each part switched off in turn.

    uv run python bench/insitu_split.py anthropic [--rounds 31] [--calls 100]
    uv run python bench/insitu_split.py litellm   [--rounds 15]

The `*_overhead.py` benchmarks time the whole instrumented call; an isolated profile of the wrapper
(over a fake `_post`) misses what the SDK's own Python does to ours (about 1 ms of it runs before
and after the wrapper's work, and leaves our code and data cold: the same work costs about twice
as much in situ). This script runs the adapter inside the real SDK call with one part replaced by a
no-op per variant, interleaved round by round, and prints each variant's overhead over the bare SDK:

  detached      the adapter as shipped, detached (events go to the replay buffer)
  passthrough   only the adapter's hook (the `_post` / `completion` wrapper and its context), no engine
  no-describe   the request and reply describers answer a constant (what describing costs)
  no-pipeline   the event pipeline hands each event through as it is (snapshot, size bound, shrink)
  no-gc         detached with the garbage collector off (bare is then timed with it off too)
  growing-ring  a replay buffer that never evicts (what freeing the oldest event costs)

A part's cost is about `detached − <variant>`. The no-op variants record different events: this is
a diagnostic, not a benchmark of anything shipped. Time is the calling thread's CPU time.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else LiteLLM fetches its cost map at import

from _harness import Variant, interleaved_rounds, summarise

import graphmind
from graphmind import _pipeline
from graphmind.adapter import Owned

REQUEST = Owned(({"model": "m", "messages": [{"role": "user", "content": "x"}]}, "k", 1))
REPLY = Owned(({"role": "assistant", "content": "y"}, {"inputTokens": 1, "outputTokens": 1}))

Swap = Callable[[], Any]


@contextmanager
def swapped(obj: Any, name: str, value: Any) -> Iterator[None]:
    """`obj.name = value` for the block (frozen dataclasses included), then put back."""
    old = getattr(obj, name)
    put = setattr if isinstance(obj, type) else object.__setattr__  # a class, or a frozen row
    put(obj, name, value)
    try:
        yield
    finally:
        put(obj, name, old)


def toggle(*patches: Callable[[], Any]) -> tuple[Swap, Swap]:
    """(on, off) entering and leaving every context manager `patches` make."""
    stack: list[ExitStack] = []

    def on() -> None:
        s = ExitStack()
        for patch in patches:
            s.enter_context(patch())
        stack.append(s)

    def off() -> None:
        stack.pop().close()

    return on, off


def no_pipeline(self: Any, event: dict[str, Any], trusted: bool = False, owned: bool = False) -> Any:
    return event, 100


@contextmanager
def gc_off() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def anthropic_variants(session: graphmind.Client, growing: graphmind.Client) -> dict[str, Variant]:
    import anthropic_overhead as bench

    from graphmind.adapter.stainless import _patch, _run
    from graphmind_anthropic import _apis, instrument_anthropic

    bare = bench.make_client()
    instrumented = instrument_anthropic(bench.make_client(), session=session)
    never_evicts = instrument_anthropic(bench.make_client(), session=growing)
    api = _apis.MESSAGES

    def passthrough(original: Callable[..., Any], call: Any) -> Any:
        token = call.sdk.exchange.set(_run.Exchange())
        try:
            return original(call.path, **call.kwargs)
        finally:
            call.sdk.exchange.reset(token)

    shapes = {"plain": functools.partial(bench.plain, instrumented)}
    return {
        "bare": (*toggle(), {"plain": functools.partial(bench.plain, bare)}),
        "detached": (*toggle(), shapes),
        "passthrough": (*toggle(lambda: swapped(_patch, "run_sync", passthrough)), shapes),
        "no-describe": (
            *toggle(
                lambda: swapped(api, "describe_request", lambda body: REQUEST),
                lambda: swapped(api, "describe_result", lambda result: REPLY),
            ),
            shapes,
        ),
        "no-pipeline": (
            *toggle(lambda: swapped(_pipeline.EventPipeline, "process_sized", no_pipeline)),
            shapes,
        ),
        "bare-no-gc": (*toggle(gc_off), {"plain": functools.partial(bench.plain, bare)}),
        "no-gc": (*toggle(gc_off), shapes),
        "growing-ring": (*toggle(), {"plain": functools.partial(bench.plain, never_evicts)}),
    }


def litellm_variants(session: graphmind.Client, growing: graphmind.Client) -> dict[str, Variant]:
    import litellm_overhead as bench

    from graphmind_litellm import _apis, _call, instrument_litellm, uninstrument_litellm

    api = _apis.BY_NAME["completion"]

    @contextmanager
    def instrumented(client: graphmind.Client) -> Iterator[None]:
        instrument_litellm(session=client)
        try:
            yield
        finally:
            uninstrument_litellm()

    def passthrough(original: Callable[..., Any], api: Any, engine: Any, args: Any, kwargs: Any) -> Any:
        token = _call.OWNED.set(True)
        try:
            return original(*args, **kwargs)
        finally:
            _call.OWNED.reset(token)

    shapes = {"plain": bench.plain}
    on = functools.partial(instrumented, session)
    return {
        "bare": (*toggle(), shapes),
        "detached": (*toggle(on), shapes),
        "passthrough": (*toggle(on, lambda: swapped(_call, "run_sync", passthrough)), shapes),
        "no-describe": (
            *toggle(
                on,
                lambda: swapped(api, "describe_request", lambda request: REQUEST),
                lambda: swapped(api, "describe_result", lambda result: REPLY),
            ),
            shapes,
        ),
        "no-pipeline": (
            *toggle(on, lambda: swapped(_pipeline.EventPipeline, "process_sized", no_pipeline)),
            shapes,
        ),
        "bare-no-gc": (*toggle(gc_off), shapes),
        "no-gc": (*toggle(on, gc_off), shapes),
        "growing-ring": (*toggle(functools.partial(instrumented, growing)), shapes),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("sdk", choices=["anthropic", "litellm"])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    options: dict[str, Any] = {"app": "bench", "url": "ws://127.0.0.1:9/ingest", "retry_interval": 60}
    session = graphmind.Client(**options)  # enabled, never attaches
    growing = graphmind.Client(**options, buffer_size=10**9, max_buffer_bytes=10**13)
    make = anthropic_variants if args.sdk == "anthropic" else litellm_variants
    variants = make(session, growing)
    on, off, shapes = variants["detached"]
    on()
    try:
        for _ in range(3000):  # the replay buffer full, as in a long-running app
            shapes["plain"]()
    finally:
        off()
    best, medians = summarise(interleaved_rounds(variants, args.rounds, args.calls, time.thread_time_ns))
    print(f"{args.sdk}: {args.rounds} interleaved rounds of {args.calls} calls, thread CPU µs per call")
    print(f"{'variant':14s} {'best':>8s} {'over bare':>10s} {'median':>8s} {'over bare':>10s}")
    for name in variants:
        base = "bare-no-gc" if name == "no-gc" else "bare"
        b, m = best[name]["plain"], medians[name]["plain"]
        print(
            f"{name:14s} {b:8.1f} {b - best[base]['plain']:+10.1f} {m:8.1f} {m - medians[base]['plain']:+10.1f}"
        )
    session.dispose()
    growing.dispose()


if __name__ == "__main__":
    main()
