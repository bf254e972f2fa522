"""Per-call overhead of graphmind-anthropic, next to openinference-instrumentation-anthropic.

    uv run python bench/anthropic_overhead.py [--calls 100] [--rounds 15]

One run, one mock transport (`httpx2.MockTransport`: no sockets, so what is measured is the SDK
and the instrumentation), two call shapes: a plain `messages.create` and a 20-delta
`create(stream=True)` read to the end. Variants:

  bare          the SDK alone
  detached      instrument_anthropic(client) with GraphMind enabled and no hub (events go to the replay buffer)
  openinference AnthropicInstrumentor with an in-memory span exporter (SimpleSpanProcessor)

Prints the µs per call (best batch; medians below), each variant's overhead over bare, and that
overhead as a fraction of openinference's. Target (issue 14): detached <= 1/10 of openinference's.
Numbers depend on the machine; run it twice and compare the ratios, not the absolute values.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx2
from _harness import (
    Toggle,
    Variant,
    interleaved_rounds,
    noop,
    openinference_toggle,
    print_ratio_table,
    summarise,
)
from anthropic import Anthropic

import graphmind
from graphmind_anthropic import instrument_anthropic
from graphmind_anthropic._inject import message_sse

MESSAGES = [{"role": "user", "content": "Plan a day in Cairo"}]
BODY = {
    "id": "msg_bench",
    "type": "message",
    "role": "assistant",
    "model": "claude-bench",
    "content": [
        {"type": "text", "text": "Visit the pyramids at Giza, then the Egyptian Museum and Khan el-Khalili."}
    ],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 12,
        "output_tokens": 18,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    },
}
JSON_BYTES = json.dumps(BODY).encode()
# 20 text deltas (plus message_start, the block start/stop, message_delta and message_stop, as the
# API sends them), one SSE event per read, as from a socket: the body is not in memory up front.
SSE_EVENTS = [e + b"\n\n" for e in message_sse(BODY, pieces=20).split(b"\n\n") if e]


class Chunks(httpx2.SyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        yield from SSE_EVENTS


def handler(request: httpx2.Request) -> httpx2.Response:
    if json.loads(request.content).get("stream"):
        return httpx2.Response(200, stream=Chunks(), headers={"content-type": "text/event-stream"})
    return httpx2.Response(200, content=JSON_BYTES, headers={"content-type": "application/json"})


def make_client() -> Anthropic:
    return Anthropic(
        api_key="bench",
        base_url="http://bench.invalid",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


def plain(client: Anthropic) -> Any:
    return client.messages.create(model="claude-bench", max_tokens=256, messages=MESSAGES)


def streamed(client: Anthropic) -> Any:
    events = 0
    for _ in client.messages.create(model="claude-bench", max_tokens=256, messages=MESSAGES, stream=True):
        events += 1
    return events


def openinference_setup() -> Toggle | None:
    """(instrument, uninstrument) for AnthropicInstrumentor with an in-memory exporter, or None."""

    def probe() -> None:
        client = make_client()
        plain(client)
        streamed(client)

    return openinference_toggle(
        "openinference-instrumentation-anthropic",
        "openinference.instrumentation.anthropic",
        "AnthropicInstrumentor",
        probe,
        2,
        "this anthropic version",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--cpu", action="store_true", help="time the calling thread's CPU (thread_time) instead of wall time"
    )
    args = parser.parse_args()
    clock = time.thread_time_ns if args.cpu else time.perf_counter_ns

    shapes = {"plain": plain, "stream20": streamed}
    detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)
    clients = {"bare": make_client(), "detached": instrument_anthropic(make_client(), session=detached)}
    oi = openinference_setup()
    if oi is not None:
        clients["openinference"] = make_client()
    variants: dict[str, Variant] = {}
    for name, client in clients.items():
        # AnthropicInstrumentor patches the Messages classes: on only for its own turn
        on, off = oi if name == "openinference" and oi is not None else (noop, noop)
        variants[name] = (on, off, {shape: functools.partial(fn, client) for shape, fn in shapes.items()})
    samples = interleaved_rounds(variants, args.rounds, args.calls, clock)
    detached.dispose()
    results, medians = summarise(samples)
    print(f"{args.rounds} interleaved rounds of {args.calls} calls; best batch (medians below)")
    print_ratio_table("variant", results)
    print("medians: " + "; ".join(f"{n} {r['plain']:.0f}/{r['stream20']:.0f} µs" for n, r in medians.items()))
    print("\ntarget: detached <= 0.10 of openinference's overhead")


if __name__ == "__main__":
    main()
