"""Per-call overhead of graphmind-openai, next to openinference-instrumentation-openai.

    uv run python bench/openai_overhead.py [--calls 300] [--rounds 9]

One run, one mock transport (`httpx2.MockTransport`: no sockets, so what is measured is the SDK
and the instrumentation), two call shapes: a plain `chat.completions.create` and a 20-chunk
`create(stream=True)` read to the end. Variants:

  bare          the SDK alone
  detached      instrument_openai(client) with GraphMind enabled and no hub (events go to the replay buffer)
  attached      instrument_openai(client) attached to an in-process hub (FakeHub), no breakpoint
  openinference OpenAIInstrumentor with an in-memory span exporter (SimpleSpanProcessor)

Prints the median µs per call, each variant's overhead over bare, and that overhead as a fraction of
openinference's. Targets (issue 6): detached <= 1/10 of openinference's overhead, attached <= 1/5.
Numbers depend on the machine; run it twice and compare the ratios, not the absolute values.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
from openai import OpenAI

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai._inject import chat_sse

MESSAGES = [
    {"role": "system", "content": "You plan trips."},
    {"role": "user", "content": "Plan a day in Cairo"},
]
BODY = {
    "id": "chatcmpl-bench",
    "object": "chat.completion",
    "created": 1_767_225_600,
    "model": "gpt-bench",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Visit the pyramids at Giza, then the Egyptian Museum and Khan el-Khalili.",
            },
            "finish_reason": "stop",
            "logprobs": None,
        }
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 18, "total_tokens": 30},
}
JSON_BYTES = json.dumps(BODY).encode()
# 20 content chunks (plus the role chunk, the finish chunk and [DONE], as the API sends them),
# delivered one SSE event per read, as from a socket: the body is not in memory up front.
SSE_EVENTS = [e + b"\n\n" for e in chat_sse(BODY, pieces=20, usage=False).split(b"\n\n") if e]


class Chunks(httpx2.SyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        yield from SSE_EVENTS


def handler(request: httpx2.Request) -> httpx2.Response:
    if json.loads(request.content).get("stream"):
        return httpx2.Response(200, stream=Chunks(), headers={"content-type": "text/event-stream"})
    return httpx2.Response(200, content=JSON_BYTES, headers={"content-type": "application/json"})


def make_client() -> OpenAI:
    return OpenAI(
        api_key="bench",
        base_url="http://bench.invalid/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


def plain(client: OpenAI) -> Any:
    return client.chat.completions.create(model="gpt-bench", messages=MESSAGES)


def streamed(client: OpenAI) -> Any:
    chunks = 0
    for _ in client.chat.completions.create(model="gpt-bench", messages=MESSAGES, stream=True):
        chunks += 1
    return chunks


CLOCK = time.perf_counter_ns


def batch_us(fn: Callable[[OpenAI], Any], client: OpenAI, calls: int) -> float:
    start = CLOCK()
    for _ in range(calls):
        fn(client)
    return (CLOCK() - start) / calls / 1000


def openinference_setup() -> tuple[Callable[[], None], Callable[[], None]] | None:
    """(instrument, uninstrument) for OpenAIInstrumentor with an in-memory exporter, or None."""
    try:
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError as exc:
        print(f"openinference-instrumentation-openai is not installed ({exc}); its row is skipped")
        return None
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()

    def on() -> None:
        instrumentor.instrument(tracer_provider=provider)

    def off() -> None:
        instrumentor.uninstrument()
        exporter.clear()

    on()
    try:
        client = make_client()
        plain(client)
        streamed(client)
        spans = len(exporter.get_finished_spans())
    finally:
        off()
    if spans < 2:
        print(
            f"openinference recorded {spans} spans for 2 calls with this openai version; its row is skipped"
        )
        return None
    return on, off


def start_hub() -> tuple[Any, str]:
    """The real hub in a subprocess when graphmind-server is installed (an in-process hub would
    compete with the app for the GIL and inflate "attached"), else the in-process FakeHub."""
    try:
        import tempfile

        from graphmind_server.testing import HubProcess
    except ImportError:
        return FakeHub().start(), "in-process FakeHub"
    return HubProcess(tempfile.mkdtemp(prefix="gm-bench-") + "/hub.db"), "real"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--cpu", action="store_true", help="time the calling thread's CPU (thread_time) instead of wall time"
    )
    args = parser.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.thread_time_ns

    shapes = {"plain": plain, "stream20": streamed}
    hub, hub_kind = start_hub()
    detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)
    attached = graphmind.Client(app="bench", url=hub.ingest_url if hub_kind == "real" else hub.url)
    if not attached.ready(5):
        raise SystemExit("the in-process hub did not attach")
    clients = {
        "bare": make_client(),
        "detached": instrument_openai(make_client(), session=detached),
        "attached": instrument_openai(make_client(), session=attached),
    }
    oi = openinference_setup()
    if oi is not None:
        clients["openinference"] = make_client()
    # Rounds interleave the variants, so a busy machine slows all of them alike; medians per variant.
    samples: dict[str, dict[str, list[float]]] = {name: {shape: [] for shape in shapes} for name in clients}
    for round_ in range(args.rounds + 1):
        for name, client in clients.items():
            if name == "openinference":
                assert oi is not None
                oi[0]()  # OpenAIInstrumentor patches the OpenAI class: on only for its own turn
            try:
                for shape, fn in shapes.items():
                    value = batch_us(fn, client, args.calls)
                    if round_:  # round 0 warms up
                        samples[name][shape].append(value)
            finally:
                if name == "openinference":
                    assert oi is not None
                    oi[1]()
    detached.dispose()
    attached.dispose()
    hub.stop()
    # The best batch of each variant: on a shared machine the slow batches measure the neighbours.
    results = {name: {shape: min(v) for shape, v in per.items()} for name, per in samples.items()}
    medians = {
        name: {shape: statistics.median(v) for shape, v in per.items()} for name, per in samples.items()
    }
    print(
        f"hub: {hub_kind}; {args.rounds} interleaved rounds of {args.calls} calls; best batch (median in brackets)"
    )

    bare = results["bare"]
    print(
        f"\n{'variant':<15}{'plain µs':>10}{'overhead':>10}{'vs OI':>8}{'stream20 µs':>13}{'overhead':>10}{'vs OI':>8}"
    )
    for name, row in results.items():
        cells = [f"{name:<15}"]
        for shape in shapes:
            over = row[shape] - bare[shape]
            cells.append(f"{row[shape]:>10.1f}" if shape == "plain" else f"{row[shape]:>13.1f}")
            cells.append(f"{over:>+10.1f}" if name != "bare" else f"{'':>10}")
            if name not in ("bare", "openinference") and "openinference" in results:
                oi_over = results["openinference"][shape] - bare[shape]
                cells.append(f"{over / oi_over:>8.2f}" if oi_over > 0 else f"{'n/a':>8}")
            else:
                cells.append(f"{'':>8}")
        print("".join(cells))
    print("medians: " + "; ".join(f"{n} {r['plain']:.0f}/{r['stream20']:.0f} µs" for n, r in medians.items()))
    print("\ntargets: detached <= 0.10 of openinference's overhead, attached <= 0.20")


if __name__ == "__main__":
    main()
