"""Per-call overhead of graphmind-openai, next to openinference-instrumentation-openai.

    uv run python bench/openai_overhead.py [--calls 300] [--rounds 9]

One run, one mock transport (`httpx2.MockTransport`: no sockets, so what is measured is the SDK
and the instrumentation), four call shapes: a plain `chat.completions.create` and a 20-chunk
`create(stream=True)` read to the end, each with `OpenAI` and with `AsyncOpenAI` (`a…`: one
`run_until_complete` per call on one event loop, the same for every variant). Variants:

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
import asyncio
import functools
import json
import time
from collections.abc import AsyncIterator, Iterator
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
from openai import AsyncOpenAI, OpenAI

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


class AsyncChunks(httpx2.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in SSE_EVENTS:
            yield event


def handler(request: httpx2.Request) -> httpx2.Response:
    if json.loads(request.content).get("stream"):
        return httpx2.Response(200, stream=Chunks(), headers={"content-type": "text/event-stream"})
    return httpx2.Response(200, content=JSON_BYTES, headers={"content-type": "application/json"})


async def async_handler(request: httpx2.Request) -> httpx2.Response:
    if json.loads(request.content).get("stream"):
        return httpx2.Response(200, stream=AsyncChunks(), headers={"content-type": "text/event-stream"})
    return httpx2.Response(200, content=JSON_BYTES, headers={"content-type": "application/json"})


def make_client() -> OpenAI:
    return OpenAI(
        api_key="bench",
        base_url="http://bench.invalid/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


def make_async_client() -> AsyncOpenAI:
    return AsyncOpenAI(
        api_key="bench",
        base_url="http://bench.invalid/v1",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(async_handler)),
    )


LOOP = asyncio.new_event_loop()


async def _aplain(client: AsyncOpenAI) -> Any:
    return await client.chat.completions.create(model="gpt-bench", messages=MESSAGES)  # type: ignore[arg-type]


async def _astreamed(client: AsyncOpenAI) -> int:
    chunks = 0
    async for _ in await client.chat.completions.create(model="gpt-bench", messages=MESSAGES, stream=True):  # type: ignore[arg-type]
        chunks += 1
    return chunks


def aplain(client: AsyncOpenAI) -> Any:
    return LOOP.run_until_complete(_aplain(client))


def astreamed(client: AsyncOpenAI) -> int:
    return LOOP.run_until_complete(_astreamed(client))


def plain(client: OpenAI) -> Any:
    return client.chat.completions.create(model="gpt-bench", messages=MESSAGES)


def streamed(client: OpenAI) -> Any:
    chunks = 0
    for _ in client.chat.completions.create(model="gpt-bench", messages=MESSAGES, stream=True):
        chunks += 1
    return chunks


def openinference_setup() -> Toggle | None:
    """(instrument, uninstrument) for OpenAIInstrumentor with an in-memory exporter, or None."""

    def probe() -> None:
        client = make_client()
        plain(client)
        streamed(client)

    return openinference_toggle(
        "openinference-instrumentation-openai",
        "openinference.instrumentation.openai",
        "OpenAIInstrumentor",
        probe,
        2,
        "this openai version",
    )


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
    clock = time.thread_time_ns if args.cpu else time.perf_counter_ns

    shapes = {"plain": plain, "stream20": streamed}
    async_shapes = {"aplain": aplain, "astream20": astreamed}
    hub, hub_kind = start_hub()
    detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)
    attached = graphmind.Client(app="bench", url=hub.ingest_url if hub_kind == "real" else hub.url)
    if not attached.ready(5):
        raise SystemExit("the in-process hub did not attach")
    clients: dict[str, tuple[OpenAI, AsyncOpenAI]] = {
        "bare": (make_client(), make_async_client()),
        "detached": (
            instrument_openai(make_client(), session=detached),
            instrument_openai(make_async_client(), session=detached),
        ),
        "attached": (
            instrument_openai(make_client(), session=attached),
            instrument_openai(make_async_client(), session=attached),
        ),
    }
    oi = openinference_setup()
    if oi is not None:
        clients["openinference"] = (make_client(), make_async_client())
    variants: dict[str, Variant] = {}
    for name, (client, aclient) in clients.items():
        # OpenAIInstrumentor patches the OpenAI classes: on only for its own turn
        on, off = oi if name == "openinference" and oi is not None else (noop, noop)
        calls: dict[str, Any] = {shape: functools.partial(fn, client) for shape, fn in shapes.items()}
        calls.update({shape: functools.partial(fn, aclient) for shape, fn in async_shapes.items()})
        variants[name] = (on, off, calls)
    samples = interleaved_rounds(variants, args.rounds, args.calls, clock)
    LOOP.run_until_complete(LOOP.shutdown_asyncgens())  # the async streams' generators, finalised here
    LOOP.close()
    detached.dispose()
    attached.dispose()
    hub.stop()
    results, medians = summarise(samples)
    print(
        f"hub: {hub_kind}; {args.rounds} interleaved rounds of {args.calls} calls; best batch (median in brackets)"
    )
    print_ratio_table("variant", results)
    print(
        "medians (plain/stream20/aplain/astream20): "
        + "; ".join(
            f"{n} {r['plain']:.0f}/{r['stream20']:.0f}/{r['aplain']:.0f}/{r['astream20']:.0f} µs"
            for n, r in medians.items()
        )
    )
    print("\ntargets: detached <= 0.10 of openinference's overhead, attached <= 0.20")


if __name__ == "__main__":
    main()
