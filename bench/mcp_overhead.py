"""Per-call overhead of graphmind-mcp: `instrument_mcp(session)` and `graphmind mcp-proxy`.

    uv run python bench/mcp_overhead.py [--calls 50] [--rounds 11]

Every variant calls `get_current_time` on the real `mcp-server-time` (local timezone UTC) from one
asyncio loop, in interleaved rounds (a busy machine slows all alike). Two clocks:

- CPU: the host thread's CPU time per call (`time.thread_time`), and for the proxy the proxy
  process's own CPU time per call (/proc/<pid>/stat): the work each variant adds, whatever else the
  machine is doing. The figure to compare on a shared machine.
- wall: the best batch's mean per call (the median batch in brackets), what a host waits.

instrument_mcp, on a ClientSession:
  bare           the SDK alone
  detached       instrument_mcp(session) with GraphMind enabled and no hub (events go to the replay buffer)
  openinference  MCPInstrumentor (openinference-instrumentation-mcp) with an in-memory span exporter
                 (stdio only: it wraps the stdio transport to carry trace context; it records no span per call)
measured in process (the SDK's in-memory transport: server and client in this thread) and over stdio.

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
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_server_time.server import create_server

import graphmind
from graphmind_mcp import instrument_mcp

SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
GRAPHMIND = shutil.which("graphmind") or str(Path(sys.executable).with_name("graphmind"))
# The same call again and again is what a loop looks like: keep the loop guard's warning out of the output.
NO_HUB = {"GRAPHMIND_URL": "ws://127.0.0.1:9/ingest", "GRAPHMIND_LOOP_ALLOW": "get_current_time"}
TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")


def proxy_cpu_us() -> float | None:
    """CPU time (user + system) of this process's `graphmind mcp-proxy` child, from /proc."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b"mcp-proxy" in cmdline and int(fields[1]) == os.getpid():  # fields[1]: the parent's pid
            return (int(fields[11]) + int(fields[12])) * TICK_US
    return None


async def connect(
    stack: AsyncExitStack, command: list[str], env: dict[str, str] | None = None
) -> ClientSession:
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


class Samples:
    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu = 0.0
        self.proxy_cpu = 0.0
        self.calls = 0


async def rounds(variants: dict[str, ClientSession], calls: int, count: int) -> dict[str, Samples]:
    samples = {name: Samples() for name in variants}
    for round_ in range(count + 1):
        for name, session in variants.items():
            proxy_before = proxy_cpu_us() if name == "proxy" else None
            wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
            for _ in range(calls):
                result = await session.call_tool("get_current_time", {"timezone": "UTC"})
                assert not result.is_error
            wall, cpu = time.perf_counter_ns() - wall, time.thread_time_ns() - cpu
            if round_:  # round 0 warms up
                s = samples[name]
                s.wall.append(wall / calls / 1000)
                s.cpu += cpu / 1000
                s.calls += calls
                if proxy_before is not None:
                    s.proxy_cpu += (proxy_cpu_us() or 0.0) - proxy_before
    return samples


def report(title: str, samples: dict[str, Samples], base: str) -> None:
    print(f"\n{title}")
    print(f"  {'variant':<14}{'CPU µs/call':>12}{'added':>9}{'wall µs/call (median)':>26}{'added':>9}")
    b = samples[base]
    for name, s in samples.items():
        cpu = (s.cpu + s.proxy_cpu) / s.calls
        cpu_added = "" if name == base else f"{cpu - b.cpu / b.calls:+9.1f}"
        wall_added = "" if name == base else f"{min(s.wall) - min(b.wall):+9.1f}"
        wall = f"{min(s.wall):.1f} ({statistics.median(s.wall):.1f})"
        print(f"  {name:<14}{cpu:>12.1f}{cpu_added:>9}{wall:>26}{wall_added:>9}")


def added_cpu(samples: dict[str, Samples], name: str, base: str) -> float:
    s, b = samples[name], samples[base]
    return (s.cpu + s.proxy_cpu) / s.calls - b.cpu / b.calls


async def main(calls: int, count: int) -> None:
    os.environ.update(NO_HUB)
    gm = graphmind.Client(app="bench", retry_interval=3600)
    async with AsyncExitStack() as stack:
        bare = await stack.enter_async_context(Client(create_server("UTC"), mode="legacy"))
        detached = await stack.enter_async_context(Client(create_server("UTC"), mode="legacy"))
        instrument_mcp(detached.session, client=gm)
        inproc = await rounds({"bare": bare.session, "detached": detached.session}, calls, count)

        stdio = {
            "bare": await connect(stack, SERVER),
            "detached": instrument_mcp(await connect(stack, SERVER), client=gm),
        }
        oi = openinference()
        if oi is not None:
            oi[0]()  # it wraps stdio_client: the session opened now keeps its wrapped streams
            try:
                stdio["openinference"] = await connect(stack, SERVER)
            finally:
                oi[1]()
        over_stdio = await rounds(stdio, calls, count)

        proxied = {
            "direct": await connect(stack, SERVER),
            "proxy": await connect(stack, [GRAPHMIND, "mcp-proxy", "--", *SERVER], env=dict(os.environ)),
        }
        through_proxy = await rounds(proxied, calls, count)
    gm.dispose()
    print(
        f"{count} interleaved rounds of {calls} calls; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    report("instrument_mcp(session), in process", inproc, "bare")
    report("instrument_mcp(session), stdio to mcp-server-time", over_stdio, "bare")
    if "openinference" in over_stdio:
        oi_over = added_cpu(over_stdio, "openinference", "bare")
        ratio = added_cpu(inproc, "detached", "bare") / oi_over if oi_over > 0 else float("inf")
        print(
            f"  detached (in process) / openinference CPU overhead: {ratio:.2f}x (openinference records no span per call)"
        )
    report("graphmind mcp-proxy, no hub (CPU: the host's and the proxy's)", through_proxy, "direct")
    added = added_cpu(through_proxy, "proxy", "direct")
    print(
        f"  added per call: {added / 1000:.3f} ms of CPU (target < 1 ms): {'ok' if added < 1000 else 'OVER'}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    anyio.run(main, args.calls, args.rounds)
