"""Where graphmind-langchain's overhead goes: LangChain's dispatch, the adapter, core; and attached vs detached.

Two views that hold on a loaded machine better than wall or CPU timing of the whole call:

- `--bytecodes` (default): Python bytecodes executed per call over no handler, on the calling
  thread (`sys.settrace` opcode events, deterministic; C work is not counted), split by where the
  code lives: LangChain and the standard library, graphmind_langchain, graphmind (core); a library
  function a graphmind package calls counts for that package. The inline
  no-op handler's count is printed beside it: what LangChain's dispatch of any inline handler costs.
- `--split`: per call over no handler, the calling thread's CPU and the other threads' (process CPU
  minus the calling thread's: the transport, an executor), detached and attached to a real hub
  with no breakpoint; each attached batch is timed until the hub has every event.

Run: `uv run python bench/langchain_shares.py [--bytecodes | --split] [--rounds N]`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

# The subjects of bench/langchain_overhead.py (this folder is on sys.path when a bench runs)
from langchain_overhead import MODEL, InlineNoOp, asearch, search

import graphmind
from graphmind_langchain import GraphmindCallbackHandler
from graphmind_server.testing import HubProcess

HISTORY = [
    SystemMessage("be brief"),
    HumanMessage("hi"),
    AIMessage("", tool_calls=[{"name": "search", "args": {"query": "q"}, "id": "c1"}]),
    ToolMessage("q", tool_call_id="c1"),
]
Call = tuple[bool, Callable[[Any], Any]]
CELLS: dict[str, Call] = {
    "tool.invoke": (False, lambda config: search.invoke({"query": "q"}, config=config)),
    "tool.ainvoke": (True, lambda config: asearch.ainvoke({"query": "q"}, config=config)),
    "model.invoke": (False, lambda config: MODEL.invoke("hi", config=config)),
    "model.ainvoke": (True, lambda config: MODEL.ainvoke("hi", config=config)),
    "model.invoke, 4 messages": (False, lambda config: MODEL.invoke(HISTORY, config=config)),
}
LOOP = asyncio.new_event_loop()


def run(cell: Call, config: Any, calls: int) -> None:
    is_async, fn = cell
    if is_async:

        async def go() -> None:
            for _ in range(calls):
                await fn(config)

        LOOP.run_until_complete(go())
    else:
        for _ in range(calls):
            fn(config)


def _where(filename: str) -> str:
    if "graphmind_langchain" in filename:
        return "adapter"
    if f"{os.sep}graphmind{os.sep}" in filename:
        return "core"
    return "LangChain + stdlib"


def bytecodes(cell: Call, callbacks: list[Any], calls: int = 20) -> Counter[str]:
    """Bytecodes per call on this thread, by where the code lives; code outside both graphmind
    packages (a dataclass `__init__`, `UUID.__hash__`, a pydantic property) counts for the
    graphmind package that called it."""
    counts: Counter[str] = Counter()
    groups: dict[int, str] = {}  # live frame -> its group

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            counts[groups.get(id(frame), "LangChain + stdlib")] += 1
        elif event == "call":
            frame.f_trace_opcodes = True
            where = _where(frame.f_code.co_filename)
            caller = groups.get(id(frame.f_back)) if frame.f_back is not None else None
            groups[id(frame)] = (
                caller if where == "LangChain + stdlib" and caller in ("adapter", "core") else where
            )
        elif event == "return":
            groups.pop(id(frame), None)
        return tracer

    config = {"callbacks": callbacks}
    run(cell, config, 30)  # warm-up: first-call caches on both sides
    sys.settrace(tracer)
    try:
        run(cell, config, calls)
    finally:
        sys.settrace(None)
    return Counter({k: v // calls for k, v in counts.items()})


def show_bytecodes() -> None:
    client = graphmind.Client(
        app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=3600, loop_guard=False
    )
    handler, inline = GraphmindCallbackHandler(client), InlineNoOp()
    parts = ("LangChain + stdlib", "adapter", "core")
    print("bytecodes per call over no handler, calling thread, detached")
    print(f"{'':26}" + "".join(f"{p:>20}" for p in parts) + f"{'total':>10}{'no-op handler':>16}")
    for name, cell in CELLS.items():
        bare = bytecodes(cell, [])
        ours = bytecodes(cell, [handler])
        noop = bytecodes(cell, [inline])
        over = {p: ours[p] - bare[p] for p in parts}
        print(
            f"{name:26}"
            + "".join(f"{over[p]:>20}" for p in parts)
            + f"{sum(over.values()):>10}{sum(noop.values()) - sum(bare.values()):>16}"
        )
    client.dispose()


def show_split(rounds: int, calls: int = 200) -> None:
    with tempfile.TemporaryDirectory() as tmp, HubProcess(os.path.join(tmp, "hub.db")) as hub:
        attached = graphmind.Client(app="bench", url=hub.ingest_url, loop_guard=False)
        assert attached.ready(5)
        detached = graphmind.Client(
            app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=3600, loop_guard=False
        )
        transport = attached._transport  # as bench/overhead.py: wait until the hub has every event
        assert transport is not None
        variants: dict[str, tuple[list[Any], Callable[[], Any] | None]] = {
            "bare": ([], None),
            "detached": ([GraphmindCallbackHandler(detached)], None),
            "attached": ([GraphmindCallbackHandler(attached)], transport.flush),
        }
        cells = {k: v for k, v in CELLS.items() if "4 messages" not in k}
        samples: dict[str, dict[str, list[tuple[float, float]]]] = {
            v: {c: [] for c in cells} for v in variants
        }
        for round_ in range(rounds + 1):
            for cell_name, cell in cells.items():
                for name, (callbacks, flush) in variants.items():
                    p0, t0 = time.process_time_ns(), time.thread_time_ns()
                    run(cell, {"callbacks": callbacks}, calls)
                    t1 = time.thread_time_ns()
                    if flush is not None:
                        flush()  # the attached batch's sends are billed to it
                    p1 = time.process_time_ns()
                    if round_:  # round 0 warms up
                        samples[name][cell_name].append(
                            ((t1 - t0) / calls / 1e3, (p1 - p0 - t1 + t0) / calls / 1e3)
                        )
        attached.dispose()
        detached.dispose()
    print("µs per call over no handler: calling thread / other threads, medians of", rounds, "rounds")
    print(f"{'':10}" + "".join(f"{c:>18}" for c in cells))
    for name in ("detached", "attached"):
        row = ""
        for cell_name in cells:
            mine = [statistics.median(x[i] for x in samples[name][cell_name]) for i in (0, 1)]
            bare = [statistics.median(x[i] for x in samples["bare"][cell_name]) for i in (0, 1)]
            row += f"{mine[0] - bare[0]:>10.1f} /{mine[1] - bare[1]:>6.1f}"
        print(f"{name:10}{row}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


def main() -> None:
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 15
    try:
        if "--split" in sys.argv:
            show_split(rounds)
        else:
            show_bytecodes()
    finally:
        LOOP.close()


if __name__ == "__main__":
    main()
