"""Per-call overhead of GraphmindCallbackHandler on LangChain's sync and async paths.

Times `tool.invoke` / `await tool.ainvoke` of a trivial `@tool`, and `model.invoke` / `ainvoke`
of a fake chat model, with: no handler, a no-op BaseCallbackHandler (LangChain's default: on async
paths it runs in the default executor), a no-op handler with run_inline=True, and
GraphmindCallbackHandler detached (no hub) and attached to the real hub (a subprocess) with no
breakpoint, and OpenInference's LangChainInstrumentor (in-memory span exporter; instrumented only
for its own turn of each round). Prints the median microseconds per call, each variant's cost over
the no-handler baseline, same run, and graphmind's cost as a fraction of OpenInference's.
Clock: process CPU time (`time.process_time_ns`, every thread of the process: the transport and
OpenInference's exporter are counted, the hub subprocess is not), so that a loaded machine's
waiting is not measured; `--wall` for wall time.
Run: `uv run python bench/langchain_overhead.py`. Numbers depend on the machine.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _harness import Toggle, openinference_toggle
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

import graphmind
from graphmind_langchain import GraphmindCallbackHandler
from graphmind_server.testing import HubProcess

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
CALLS = 200
CLOCK = time.process_time_ns


class NoOp(BaseCallbackHandler):
    pass


class InlineNoOp(BaseCallbackHandler):
    run_inline = True


@tool
def search(query: str) -> str:
    """Search."""
    return query


@tool
async def asearch(query: str) -> str:
    """Search."""
    return query


MODEL = FakeMessagesListChatModel(responses=[AIMessage("ok")])


def _time_sync(fn: Callable[[], Any]) -> float:
    start = CLOCK()
    for _ in range(CALLS):
        fn()
    return (CLOCK() - start) / CALLS / 1000


async def _time_async(fn: Callable[[], Awaitable[Any]]) -> float:
    start = CLOCK()
    for _ in range(CALLS):
        await fn()
    return (CLOCK() - start) / CALLS / 1000


def openinference_setup() -> Toggle:
    """(instrument, uninstrument) for LangChainInstrumentor with an in-memory span exporter."""

    def probe() -> None:
        search.invoke({"query": "q"})
        MODEL.invoke("hi")

    toggle = openinference_toggle(
        "openinference-instrumentation-langchain",
        "openinference.instrumentation.langchain",
        "LangChainInstrumentor",
        probe,
        2,
        "this langchain version",
    )
    if toggle is None:  # this bench's ratios are against openinference: nothing to print without it
        raise SystemExit("openinference's row is required here")
    return toggle


def measure(
    handlers: dict[str, list[Any]], oi: tuple[Callable[[], None], Callable[[], None]]
) -> dict[str, dict[str, float]]:
    """Rounds interleave the variants, so machine noise and drift hit them all alike."""
    paths: dict[str, tuple[bool, Callable[[Any], Any]]] = {
        "tool sync": (False, lambda config: search.invoke({"query": "q"}, config=config)),
        "tool async": (True, lambda config: asearch.ainvoke({"query": "q"}, config=config)),
        "model sync": (False, lambda config: MODEL.invoke("hi", config=config)),
        "model async": (True, lambda config: MODEL.ainvoke("hi", config=config)),
    }
    samples: dict[str, dict[str, list[float]]] = {n: {p: [] for p in paths} for n in handlers}

    async def run_async_round(name: str, path: str, config: Any) -> None:
        samples[name][path].append(await _time_async(lambda: paths[path][1](config)))

    loop = asyncio.new_event_loop()
    try:
        for round_no in range(ROUNDS + 1):
            for path, (is_async, _) in paths.items():
                for name, callbacks in handlers.items():
                    config: Any = {"callbacks": callbacks}
                    if name == "openinference":
                        oi[0]()  # it patches LangChain's callback manager: on only for its own turn
                    try:
                        if is_async:
                            loop.run_until_complete(run_async_round(name, path, config))
                        else:
                            samples[name][path].append(
                                _time_sync(lambda config=config, path=path: paths[path][1](config))
                            )
                    finally:
                        if name == "openinference":
                            oi[1]()
                    if round_no == 0:  # warm-up round, not counted
                        samples[name][path].clear()
    finally:
        loop.close()
    return {n: {p: statistics.median(v) for p, v in row.items()} for n, row in samples.items()}


def main() -> None:
    global CLOCK
    if "--wall" in sys.argv:
        CLOCK = time.perf_counter_ns
    oi = openinference_setup()
    opts: dict[str, Any] = {"loop_guard": False}
    detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=3600, **opts)
    with tempfile.TemporaryDirectory() as tmp, HubProcess(os.path.join(tmp, "hub.db")) as hub:
        attached = graphmind.Client(app="bench", url=hub.ingest_url, **opts)
        assert attached.ready(5)
        results = measure(
            {
                "no handler": [],
                "no-op handler": [NoOp()],
                "no-op handler, run_inline": [InlineNoOp()],
                "graphmind, disabled": [GraphmindCallbackHandler(graphmind.Client(app="off", enabled=False))],
                "graphmind, detached": [GraphmindCallbackHandler(detached)],
                "graphmind, attached": [GraphmindCallbackHandler(attached)],
                "openinference": [],
            },
            oi,
        )
        attached.dispose()
    detached.dispose()
    base = results["no handler"]
    columns = list(base)
    print(
        f"{'µs per call, median of ' + str(ROUNDS) + ' rounds x ' + str(CALLS):<34}"
        + "".join(f"{c:>20}" for c in columns)
    )
    for name, row in results.items():
        cells = "".join(f"{row[c]:>10.1f} ({row[c] - base[c]:+7.1f})" for c in columns)
        print(f"{name:<34}{cells}")
    oi_row = results["openinference"]
    print("\ngraphmind's overhead / openinference's (targets: detached <= 0.10, attached <= 0.20)")
    for name in ("graphmind, detached", "graphmind, attached"):
        cells = "".join(
            f"{(results[name][c] - base[c]) / (oi_row[c] - base[c]):>20.2f}"
            if oi_row[c] > base[c]
            else f"{'n/a':>20}"
            for c in columns
        )
        print(f"{name:<34}{cells}")
    # LangChain's own dispatch of any inline handler (the no-op row) is part of graphmind's overhead;
    # this splits it off, so what graphmind itself adds (handler, core, transport) is visible.
    inline = results["no-op handler, run_inline"]
    print("\nover the inline no-op handler (what graphmind adds beyond LangChain's dispatch), µs")
    for name in ("graphmind, detached", "graphmind, attached"):
        print(f"{name:<34}" + "".join(f"{results[name][c] - inline[c]:>20.1f}" for c in columns))
    clock = "wall" if CLOCK is time.perf_counter_ns else "process CPU"
    print(f"clock: {clock}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
