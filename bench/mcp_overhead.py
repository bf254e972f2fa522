"""Per-call overhead of graphmind-mcp: `instrument_mcp(session)` and `graphmind mcp-proxy`.

    uv run python bench/mcp_overhead.py [--calls 50] [--rounds 9]

Every variant calls `get_current_time` on the real `mcp-server-time` over stdio (its own process,
local timezone UTC), in one asyncio loop, in interleaved rounds (a busy machine slows all alike);
each figure is the median over rounds of the mean per call of a batch.

instrument_mcp, on a ClientSession:
  bare           the SDK alone
  detached       instrument_mcp(session) with GraphMind enabled and no hub (events go to the replay buffer)
  openinference  MCPInstrumentor (openinference-instrumentation-mcp) with an in-memory span exporter:
                 it wraps the stdio transport to carry trace context; it records no span per call

graphmind mcp-proxy (issue 13: "50 calls with no hub attached add < 1 ms each over a direct connection"):
  direct         host -> mcp-server-time
  proxy          host -> graphmind mcp-proxy (GRAPHMIND_URL at a closed port) -> mcp-server-time
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import graphmind
from graphmind_mcp import instrument_mcp

SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
GRAPHMIND = shutil.which("graphmind") or str(Path(sys.executable).with_name("graphmind"))
NO_HUB = {"GRAPHMIND_URL": "ws://127.0.0.1:9/ingest"}


async def connect(stack: AsyncExitStack, command: list[str], env: dict[str, str] | None = None) -> ClientSession:
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    read, write = await stack.enter_async_context(stdio_client(params, errlog=open(os.devnull, "w")))  # noqa: SIM115
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    await session.list_tools()
    return session


def openinference() -> tuple[Callable[[], None], Callable[[], None]] | None:
    try:
        from openinference.instrumentation.mcp import MCPInstrumentor
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError as exc:
        print(f"openinference-instrumentation-mcp is not installed ({exc}); its row is skipped")
        return None
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    instrumentor = MCPInstrumentor()
    return (lambda: instrumentor.instrument(tracer_provider=provider)), instrumentor.uninstrument


async def batch_us(session: ClientSession, calls: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(calls):
        result = await session.call_tool("get_current_time", {"timezone": "UTC"})
        assert not result.is_error
    return (time.perf_counter_ns() - start) / calls / 1000


async def rounds(variants: dict[str, ClientSession], calls: int, count: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for round_ in range(count + 1):
        for name, session in variants.items():
            value = await batch_us(session, calls)
            if round_:  # round 0 warms up
                samples[name].append(value)
    return {name: statistics.median(values) for name, values in samples.items()}


def report(title: str, medians: dict[str, float], base: str) -> None:
    print(f"\n{title}")
    for name, value in medians.items():
        over = "" if name == base else f"{value - medians[base]:>+10.1f} µs"
        print(f"  {name:<14}{value:>10.1f} µs/call{over}")


async def main(calls: int, count: int) -> None:
    gm = graphmind.Client(app="bench", url=NO_HUB["GRAPHMIND_URL"], retry_interval=3600)
    async with AsyncExitStack() as stack:
        variants = {"bare": await connect(stack, SERVER), "detached": instrument_mcp(await connect(stack, SERVER), client=gm)}
        oi = openinference()
        if oi is not None:
            oi[0]()  # it wraps stdio_client: the session opened now keeps its wrapped streams
            try:
                variants["openinference"] = await connect(stack, SERVER)
            finally:
                oi[1]()
        a = await rounds(variants, calls, count)
        proxied = {
            "direct": await connect(stack, SERVER),
            "proxy": await connect(stack, [GRAPHMIND, "mcp-proxy", "--", *SERVER], env={**os.environ, **NO_HUB}),
        }
        b = await rounds(proxied, calls, count)
    gm.dispose()
    print(f"{count} interleaved rounds of {calls} calls; median of the per-call mean of each batch")
    report("instrument_mcp(session), stdio to mcp-server-time", a, "bare")
    if "openinference" in a:
        oi_over = a["openinference"] - a["bare"]
        ratio = (a["detached"] - a["bare"]) / oi_over if oi_over > 0 else float("inf")
        print(f"  detached overhead / openinference overhead: {ratio:.2f}x (openinference records no span per call)")
    report("graphmind mcp-proxy, no hub", b, "direct")
    added = b["proxy"] - b["direct"]
    print(f"  added per call: {added / 1000:.3f} ms (target < 1 ms): {'ok' if added < 1000 else 'OVER'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    anyio.run(main, args.calls, args.rounds)
