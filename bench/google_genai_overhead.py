"""Per-call overhead of graphmind-google-genai, next to openinference-instrumentation-google-genai.

    uv run python bench/google_genai_overhead.py [--calls 100] [--rounds 15] [--cpu]

One process, one mock transport (`httpx.MockTransport` as the client's `httpx_client`: no sockets,
so what is measured is the SDK and the instrumentation), three call shapes: a plain
`generate_content`, a 20-chunk `generate_content_stream` read to the end, and an automatic function
calling round trip (the model asks for one Python function, the SDK calls it, the model answers: two
requests and one tool call). Variants:

  bare          the SDK alone
  detached      instrument_google_genai(client) with GraphMind enabled and no hub (events go to the
                replay buffer)
  openinference GoogleGenAIInstrumentor with an in-memory span exporter (SimpleSpanProcessor), on
                only for its own turn (it patches the SDK's classes)

Rounds interleave the variants, in one process. Prints the µs per call (best batch, medians in
brackets), each variant's overhead over bare and that overhead as a fraction of openinference's,
then the median-batch and paired ratios. Target: detached <= 0.25 of openinference's overhead.
Numbers depend on the machine; run it twice and compare the ratios, not the absolute values.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
from _harness import (
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
from google import genai
from google.genai import types

import graphmind
from graphmind_google_genai import instrument_google_genai
from graphmind_google_genai._inject import body, sse

MODEL = "gemini-2.5-flash"
TEXT = "Visit the pyramids at Giza, then the Egyptian Museum and Khan el-Khalili."
USAGE = {"usage": {"inputTokens": 12, "outputTokens": 18, "totalTokens": 30}, "model": MODEL}
REPLY = json.dumps(body({"content": TEXT, **USAGE})).encode()
CALL = json.dumps(body({"tool_calls": [{"name": "search", "arguments": {"q": "cairo"}}], **USAGE})).encode()
# About 20 text chunks (19: 4 characters each), one SSE event per read, as from a socket: the body is not in memory up front.
SSE_EVENTS = [e + b"\n\n" for e in sse(body({"content": TEXT, **USAGE}), 20).split(b"\n\n") if e]


class Chunks(httpx.SyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        yield from SSE_EVENTS


def handler(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith(":streamGenerateContent"):
        return httpx.Response(200, stream=Chunks(), headers={"content-type": "text/event-stream"})
    sent = json.loads(request.content)
    answered = any("functionResponse" in p for c in sent["contents"] for p in c.get("parts", []))
    asks = sent.get("tools") and not answered
    return httpx.Response(200, content=CALL if asks else REPLY, headers={"content-type": "application/json"})


def search(q: str) -> str:
    """Searches the travel guide."""
    return f"results for {q}"


CONFIG = types.GenerateContentConfig(
    tools=[search], automatic_function_calling=types.AutomaticFunctionCallingConfig(maximum_remote_calls=4)
)


def make_client() -> genai.Client:
    options = types.HttpOptions(
        base_url="http://bench.invalid", httpx_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    return genai.Client(api_key="bench", http_options=options)


def plain(client: genai.Client) -> Any:
    return client.models.generate_content(model=MODEL, contents="Plan a day in Cairo")


def streamed(client: genai.Client) -> int:
    return sum(1 for _ in client.models.generate_content_stream(model=MODEL, contents="Plan a day in Cairo"))


def afc(client: genai.Client) -> Any:
    return client.models.generate_content(model=MODEL, contents="Plan a day in Cairo", config=CONFIG)


def openinference_setup() -> Toggle | None:
    """(instrument, uninstrument) for GoogleGenAIInstrumentor with an in-memory exporter, or None."""

    def probe() -> None:
        client = make_client()
        plain(client)
        streamed(client)

    return openinference_toggle(
        "openinference-instrumentation-google-genai",
        "openinference.instrumentation.google_genai",
        "GoogleGenAIInstrumentor",
        probe,
        2,
        "this google-genai version",
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
    shapes = {"plain": plain, "stream20": streamed, "afc": afc}
    detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)
    clients = {"bare": make_client(), "detached": instrument_google_genai(make_client(), session=detached)}
    assert (
        streamed(clients["detached"]) == streamed(clients["bare"]) > 10
        and afc(clients["detached"]).text == TEXT
    )
    oi = openinference_setup()
    if oi is not None:
        clients["openinference"] = make_client()
    variants: dict[str, Variant] = {}
    for name, client in clients.items():
        on, off = oi if name == "openinference" and oi is not None else (noop, noop)
        variants[name] = (on, off, {shape: functools.partial(fn, client) for shape, fn in shapes.items()})
    samples = interleaved_rounds(variants, args.rounds, args.calls, clock)
    detached.dispose()
    results, medians = summarise(samples)
    print(f"{args.rounds} interleaved rounds of {args.calls} calls; best batch (medians in brackets)")
    print_ratio_table("variant", results, medians=medians)
    print_median_ratios(medians)
    print_paired_ratios(samples)
    print("\ntarget: detached <= 0.25 of openinference's overhead")


if __name__ == "__main__":
    main()
