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
  floor         the hook plus the least a recorder can do and still keep the replay
                rule: a fresh copy of the request's and the reply's fields, two event dicts with
                seq / ts / ids, each sized by `repr` and appended to a bounded ring; no engine, no
                gates, no loop guard, no pipeline. What any design that records at call time pays.
  lane          (anthropic) the describers, `start_node` and `finish` as shipped, without the call
                loop, its driver and the settle objects (what that layer costs)
  openinference the peer, as in bench/<sdk>_overhead.py: its overhead ÷ 10 is the target in this run

A part's cost is about `detached − <variant>`. The no-op variants record different events: this is
a diagnostic, not a benchmark of anything shipped. Time is the calling thread's CPU time.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import itertools
import os
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else LiteLLM fetches its cost map at import

from _harness import Variant, interleaved_rounds, summarise

import graphmind
from graphmind._events import pipeline as _pipeline
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


def no_pipeline(
    self: Any, event: dict[str, Any], trusted: bool = False, owned: bool = False, payload: Any = None
) -> Any:
    return event, 100


@contextmanager
def gc_off() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class FloorRecorder:
    """The least recording a detached call can do at call time (see the module's docstring): the
    caller copies the request's and the reply's fields; this numbers, stamps, sizes and rings them."""

    def __init__(self) -> None:
        self.ring: Any = collections.deque(maxlen=2000)
        self.seq = itertools.count()
        self.ids = itertools.count()

    def started(self, request: dict[str, Any]) -> tuple[str, float]:
        instance, started_at = f"i{next(self.ids):x}", time.time()
        event = {
            "type": "node.started", "seq": next(self.seq), "ts": started_at, "runId": "r", "nodeId": "llm:step",
            "instanceId": instance, "kind": "llm", "name": "m", "parentInstanceId": "r", "input": request,
        }  # fmt: skip
        self.ring.append((event, 320 + len(repr(request))))
        return instance, started_at

    def finished(self, node: tuple[str, float], output: dict[str, Any], usage: dict[str, Any]) -> None:
        ended_at = time.time()
        event = {
            "type": "node.finished", "seq": next(self.seq), "ts": ended_at, "runId": "r", "nodeId": "llm:step",
            "instanceId": node[0], "kind": "llm", "name": "m", "parentInstanceId": "r",
            "output": output, "usage": usage, "durationMs": round((ended_at - node[1]) * 1000, 2),
        }  # fmt: skip
        self.ring.append((event, 320 + len(repr(output)) + len(repr(usage))))


def floor_post(original: Callable[..., Any], call: Any, floor: FloorRecorder) -> Any:
    from graphmind.adapter.stainless import _exchange

    body = call.kwargs["body"]
    messages = [{"role": m["role"], "content": m["content"]} for m in body["messages"]]
    node = floor.started({"model": body["model"], "messages": messages, "maxTokens": body.get("max_tokens")})
    token = call.sdk.exchange.set(_exchange.Exchange())
    try:
        result = original(call.path, **call.kwargs)
    finally:
        call.sdk.exchange.reset(token)
    u = result.usage
    output = {"role": result.role, "content": [{"type": b.type, "text": b.text} for b in result.content]}
    floor.finished(node, output, {"inputTokens": u.input_tokens, "outputTokens": u.output_tokens})
    return result


def floor_completion(original: Callable[..., Any], args: Any, kwargs: Any, floor: FloorRecorder) -> Any:
    from graphmind_litellm import _call

    messages = [{"role": m["role"], "content": m["content"]} for m in kwargs["messages"]]
    node = floor.started({"model": kwargs["model"], "messages": messages})
    token = _call.OWNED.set(True)
    try:
        result = original(*args, **kwargs)
    finally:
        _call.OWNED.reset(token)
    message, u = result.choices[0].message, result.usage
    output = {"role": message.role, "content": message.content}
    floor.finished(node, output, {"inputTokens": u.prompt_tokens, "outputTokens": u.completion_tokens})
    return result


def lean_request(body: Any) -> Any:
    """What one inlined describer could do for this benchmark's request (a plain str message)."""
    messages = [{"role": m["role"], "content": m["content"]} for m in body["messages"]]
    first = messages[0]
    key = (
        '{"first": {"content": "' + first["content"] + '", "role": "' + first["role"] + '"}, "system": null}'
    )
    node_input = {"model": body["model"], "messages": messages, "max_tokens": body["max_tokens"]}
    return Owned((node_input, key, len(messages)))


def lean_reply(result: Any) -> Any:
    """The same for this benchmark's reply (one text block)."""
    u = result.usage
    prompt = u.input_tokens + (u.cache_read_input_tokens or 0) + (u.cache_creation_input_tokens or 0)
    usage = {"inputTokens": prompt, "outputTokens": u.output_tokens, "totalTokens": prompt + u.output_tokens}
    text = "".join(b.text for b in result.content)
    return Owned(
        (
            {"role": "assistant", "content": text, "stop_reason": result.stop_reason, "model": result.model},
            usage,
        )
    )


def lane_post(original: Callable[..., Any], call: Any) -> Any:
    """The adapter's own describers, `start_node` and `finish` (real events through the real pipeline
    and ring), with the call loop, its driver and the settle objects left out: what they cost."""
    from graphmind.adapter.stainless import _exchange

    ex = call.engine.start_node(call.spec())
    token = call.sdk.exchange.set(exchange := _exchange.Exchange())
    inner = ex.host.current_node.set(ex.instance_id)
    try:
        result = original(call.path, **call.kwargs)
    finally:
        ex.host.current_node.reset(inner)
        call.sdk.exchange.reset(token)
    described = call.described(result, exchange.response)
    ex.finish(described[0], usage=described[1], owned=True)
    return result


def anthropic_variants(session: graphmind.Client, growing: graphmind.Client) -> dict[str, Variant]:
    import anthropic_overhead as bench

    from graphmind.adapter.stainless import _exchange, _patch
    from graphmind_anthropic import _apis, instrument_anthropic

    bare = bench.make_client()
    instrumented = instrument_anthropic(bench.make_client(), session=session)
    never_evicts = instrument_anthropic(bench.make_client(), session=growing)
    api = _apis.MESSAGES
    peer = bench.openinference_setup()

    def passthrough(original: Callable[..., Any], call: Any) -> Any:
        token = call.sdk.exchange.set(_exchange.Exchange())
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
        "lane": (*toggle(lambda: swapped(_patch, "run_sync", lane_post)), shapes),
        "no-size": (
            *toggle(
                lambda: swapped(_pipeline, "shrink_measured", lambda v: (v, 100)),  # type: ignore[arg-type]
                lambda: swapped(_pipeline, "approx_size", lambda v: 100),  # type: ignore[arg-type]
            ),
            shapes,
        ),
        "lean-describe": (
            *toggle(
                lambda: swapped(api, "describe_request", lean_request),
                lambda: swapped(api, "describe_result", lean_reply),
            ),
            shapes,
        ),
        "floor": (
            *toggle(
                lambda: swapped(_patch, "run_sync", functools.partial(floor_post, floor=FloorRecorder()))
            ),
            shapes,
        ),
        **({"openinference": (*peer, {"plain": functools.partial(bench.plain, bare)})} if peer else {}),
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
    peer = bench.openinference_toggle_litellm()
    floor = FloorRecorder()

    def floor_lite(original: Callable[..., Any], api: Any, engine: Any, args: Any, kwargs: Any) -> Any:
        return floor_completion(original, args, kwargs, floor)

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
        "floor": (*toggle(on, lambda: swapped(_call, "run_sync", floor_lite)), shapes),
        **({"openinference": (*peer, shapes)} if peer else {}),
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
    peer = "openinference" in variants
    print(
        f"{'variant':14s} {'best':>8s} {'over bare':>10s} {'median':>8s} {'over bare':>10s}"
        + ("  ÷ peer's overhead (best / median)" if peer else "")
    )
    for name in variants:
        base = "bare-no-gc" if name == "no-gc" else "bare"
        b = best[name]["plain"] - best[base]["plain"]
        m = medians[name]["plain"] - medians[base]["plain"]
        line = f"{name:14s} {best[name]['plain']:8.1f} {b:+10.1f} {medians[name]['plain']:8.1f} {m:+10.1f}"
        if peer:
            pb = best["openinference"]["plain"] - best["bare"]["plain"]
            pm = medians["openinference"]["plain"] - medians["bare"]["plain"]
            line += f"  {b / pb:5.2f} / {m / pm:5.2f}"
        print(line)
    session.dispose()
    growing.dispose()


if __name__ == "__main__":
    main()
