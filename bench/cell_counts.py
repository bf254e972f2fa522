"""Instructions per call of the overhead benches' cells, counted by valgrind: an A/B of two trees
that a busy or slow machine cannot blur.

    uv run python bench/cell_counts.py openai anthropic ... [--tree DIR ...] [--calls 200] [--threads all]

BENCH is a `bench/<name>_overhead.py` (`core` for `bench/overhead.py`). Each tree (this checkout by
default; `--tree DIR` adds another checkout, with its own `.venv`, e.g. a `git worktree` of an older
commit) runs each bench once in its own Python under `valgrind --tool=callgrind`, with that tree's
bench module: the bench builds its variants as it always does (bare, detached, attached, ...; the
openinference rows are left out), then every cell runs `--warmup` calls, and `--calls` calls between
two markers (`math.lgamma` zeroes the counters, `math.erfc` dumps them; nothing else calls either).
Before the first cell, each graphmind client's replay ring is filled (5,000 core events), so a
detached call pays the steady state of a long-running app: the oldest event dropped per new one;
then what is alive is frozen out of the garbage collector's sight (`gc.freeze()`), so a window
counts the collections its own calls cause and no full sweep of the heap.
A cell's count is (instructions of the variant - instructions of bare) / calls. Python's clocks
run as much slower in that process as valgrind runs Python (a fixed piece of Python timed in both,
`calibration_ns`; `GM_CELLS_SLOWDOWN` sets the factor instead): what GraphMind and the SDK do by
the clock (a token batch every 34 ms, a batching window) then happens as often per call as it
does without valgrind.

`--threads app` (default) counts the calling thread only, which is what the benches' `--cpu` clock
times; `--threads all` counts every thread of the app (the transport thread's encode and send of
an attached cell too; its clock-driven work runs ~50x as often per call under valgrind, so read
those cells as an upper bound). Each attached cell flushes its transport before and inside its
window, so its sends land in its own count.

Prints one table per bench: each cell's instructions over bare per tree and the change against the
first tree. Takes minutes per bench (valgrind runs Python ~50x slower). Not a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import importlib
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RING_FILL = 5_000
BASES = {"langchain": "no handler"}  # the variant a bench measures against, where it is not `bare`


# ----------------------------------------------------------------- the inner process (under valgrind)

Cell = tuple[str, str, Callable[[], Any]]  # (variant, shape, one call)


class _Cells:
    """Where a bench's patched hook hands over its cells: counted on the spot, inside the bench's
    main() (its clients and hub still open), then the process ends."""

    calls = 0
    warmup = 0
    out = Path()

    @classmethod
    def count(
        cls, cells: list[Cell], switches: dict[str, tuple[Callable[[], Any], Callable[[], Any]]]
    ) -> None:
        _count(cells, switches, cls.calls, cls.warmup, cls.out)
        _exit_counted()


def _exit_counted() -> None:
    """Stops the hub processes the bench started, then ends this process without the bench's own
    teardown (its clients and loops: this process only counted)."""
    gc.unfreeze()  # frozen objects are out of gc.get_objects()'s sight too
    for hub in [o for o in gc.get_objects() if type(o).__name__ == "HubProcess"]:
        try:
            hub.stop()
        except Exception as exc:  # a hub already gone: nothing left to stop
            print(f"could not stop a bench hub: {exc!r}", file=sys.stderr)
    sys.stdout.flush()
    os._exit(0)


def _graphmind_clients() -> list[Any]:
    return [
        o
        for o in gc.get_objects()
        if type(o).__name__ == "Client" and type(o).__module__.startswith("graphmind")
    ]


def _transports() -> list[Any]:
    return [t for c in _graphmind_clients() if (t := getattr(c, "_transport", None)) is not None]


def _flush_attached(transports: list[Any]) -> None:
    for transport in transports:
        if getattr(transport, "attached", False):
            transport.flush()


def _fill_rings() -> None:
    """5,000 core events into every live client's ring: the steady state of a long-running app."""

    def filler(i: int) -> int:
        return i

    for client in _graphmind_clients():
        if getattr(client, "_transport", None) is None:
            continue
        wrapped = client.wrap(filler, name="ring_fill")
        for i in range(RING_FILL // 2):  # two events per call (started, finished)
            wrapped(i)
    _flush_attached(_transports())


def _count(cells: list[Cell], switches: dict[str, Any], calls: int, warmup: int, out: Path) -> None:
    flush_inside = os.environ.get("GM_CELLS_THREADS") == "all"
    wanted = os.environ.get("GM_CELLS_VARIANTS")
    if wanted:
        keep = {*wanted.split(","), "bare", BASES.get(os.environ.get("GM_CELLS_BENCH", ""), "bare")}
        cells = [cell for cell in cells if cell[0] in keep]
    labels: list[str] = []
    filled = False
    transports = _transports()  # once: gc.get_objects() inside a window would swamp its count
    for variant, shape, fn in cells:
        on, off = switches.get(variant, (None, None))
        if on is not None:
            on()
        try:
            for _ in range(warmup):
                fn()
            if not filled:
                _fill_rings()
                filled = True
                for _ in range(warmup):
                    fn()
                # What is alive now (the SDK, the ring's 5,000 events) is out of the collector's
                # sight: a full collection inside a window costs as much as a few hundred calls.
                gc.collect()
                gc.freeze()
            n = max(calls // 10, 5) if "stream" in shape else calls
            _flush_attached(transports)
            gc.collect()
            math.lgamma(1.0)  # callgrind: --zero-before=math_lgamma
            for _ in range(n):
                fn()
            if flush_inside:
                _flush_attached(transports)
            math.erfc(1.0)  # callgrind: --dump-before=math_erfc
            labels.append(f"{variant}\t{shape}\t{n}")
        finally:
            if off is not None:
                off()
    out.write_text(json.dumps(labels))


def _capture_harness(module: Any) -> None:
    """openai, anthropic, litellm, llamaindex: the variants handed to `interleaved_rounds`."""

    def capture(variants: dict[str, Any], rounds: int, calls: int, clock: Any) -> Any:
        cells: list[Cell] = []
        switches = {}
        for name, (on, off, shapes) in variants.items():
            if name == "openinference":
                continue
            switches[name] = (on, off)
            cells += [(name, shape, fn) for shape, fn in shapes.items()]
        _Cells.count(cells, switches)

    module.interleaved_rounds = capture
    module.openinference_toggle = lambda *a, **k: None
    if hasattr(module, "openinference_toggle_litellm"):
        module.openinference_toggle_litellm = lambda: None
    if hasattr(module, "openinference_setup"):
        module.openinference_setup = lambda: None


def _capture_langchain(module: Any) -> None:
    def capture(handlers: dict[str, list[Any]], oi: Any) -> Any:
        loop = asyncio.new_event_loop()
        paths: dict[str, Callable[[Any], Any]] = {
            "tool sync": lambda config: module.search.invoke({"query": "q"}, config=config),
            "tool async": lambda config: loop.run_until_complete(
                module.asearch.ainvoke({"query": "q"}, config=config)
            ),
            "model sync": lambda config: module.MODEL.invoke("hi", config=config),
            "model async": lambda config: loop.run_until_complete(module.MODEL.ainvoke("hi", config=config)),
        }
        cells: list[Cell] = []
        for name, callbacks in handlers.items():
            if name in ("openinference", "no-op handler", "no-op handler, run_inline"):
                continue
            for path, call in paths.items():
                config: Any = {"callbacks": callbacks}
                cells.append((name, path, functools.partial(call, config)))
        _Cells.count(cells, {})

    module.measure = capture
    module.openinference_setup = lambda: None


def _capture_core(module: Any) -> None:
    names = iter(["bare", "detached", "attached", "otel span"])
    captured: list[Cell] = []
    own_loop = asyncio.new_event_loop()  # the bench closes its own loop on the way out
    tick = itertools.count()  # the bench's calls differ in `limit`: the loop guard sees no repeat

    def batch_us(fn: Callable[..., Any], calls: int, settle: Any = None) -> float:
        name = next(names)
        if name == "otel span":
            _Cells.count(captured, {})
        captured.append((name, "sync", lambda: fn("q", next(tick), True)))
        return 1.0

    def abatch_us(
        loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], calls: int, settle: Any = None
    ) -> float:
        name = captured[-1][0]
        captured.append((name, "async", lambda: own_loop.run_until_complete(fn("q", next(tick), True))))
        return 1.0

    module.batch_us = batch_us
    module.abatch_us = abatch_us


async def _count_mcp(variants: dict[str, Any], calls: int, warmup: int, out: Path) -> None:
    """mcp: the in-process sessions (the first `rounds` call), counted inside the bench's event loop."""
    labels: list[str] = []
    filled = False
    for name, session in variants.items():
        for _ in range(warmup):
            await session.call_tool("get_current_time", {"timezone": "UTC"})
        if not filled:
            _fill_rings()
            filled = True
        gc.collect()
        math.lgamma(1.0)
        for _ in range(calls):
            await session.call_tool("get_current_time", {"timezone": "UTC"})
        math.erfc(1.0)
        labels.append(f"{name}\tcall_tool\t{calls}")
    out.write_text(json.dumps(labels))


def _slow_clocks(slowdown: float) -> None:
    """Python's clocks run `slowdown` times slower, before anything imports them: work done by the
    clock (a token batch sent every 34 ms, the writer's batching window, a question every 0.5 s)
    then happens as often per call as it does without valgrind."""
    for name in ("perf_counter", "monotonic", "time"):
        real, real_ns = getattr(time, name), getattr(time, name + "_ns")
        start, start_ns = real(), real_ns()
        setattr(time, name, lambda real=real, start=start: start + (real() - start) / slowdown)
        setattr(
            time, name + "_ns", lambda real=real_ns, start=start_ns: start + int((real() - start) / slowdown)
        )


def calibration_ns() -> int:
    """The best of five runs of a fixed piece of Python (dicts, str, json, calls), in ns: timed here
    and under valgrind, the ratio is how much slower valgrind runs Python on this machine now."""
    record = {"type": "node.finished", "runId": "r-1", "output": {"text": "a reply", "n": [1, 2.5, None]}}

    def work() -> int:
        total = 0
        for i in range(400):
            event = dict(record, seq=i)
            total += len(json.dumps(event)) + len(json.loads(json.dumps(event["output"])))
            total += sum(len(k) for k in event) + len(f"{i}:{event['runId']}".upper())
        return total

    best = 0
    for _ in range(5):
        start = time.perf_counter_ns()
        work()
        elapsed = time.perf_counter_ns() - start
        best = elapsed if not best else min(best, elapsed)
    return best


def inner(bench: str, bench_dir: str, calls: int, warmup: int, out: Path) -> None:
    native = int(os.environ.get("GM_CELLS_NATIVE_NS") or 0)
    slowdown = float(os.environ.get("GM_CELLS_SLOWDOWN") or (calibration_ns() / native if native else 50))
    (out.parent / "slowdown").write_text(f"{slowdown:.1f}")
    _slow_clocks(slowdown)
    sys.path.insert(0, bench_dir)
    module: Any = importlib.import_module("overhead" if bench == "core" else f"{bench}_overhead")
    sys.argv = [module.__file__ or bench]
    if bench == "mcp":

        async def rounds(variants: dict[str, Any], _calls: int, _count: int) -> Any:
            await _count_mcp(variants, calls, warmup, out)
            _exit_counted()

        module.rounds = rounds
        module.openinference = lambda: None
        import anyio

        anyio.run(module.main, calls, 1)
        return
    _Cells.calls, _Cells.warmup, _Cells.out = calls, warmup, out
    {"langchain": _capture_langchain, "core": _capture_core}.get(bench, _capture_harness)(module)
    module.main()
    raise SystemExit(f"{bench}: its main() returned without handing over its cells")


# --------------------------------------------------------------------------- the outer process


def count_tree(
    tree: Path,
    bench: str,
    calls: int,
    warmup: int,
    threads: str,
    keep: Path | None = None,
    variants: str | None = None,
) -> dict[tuple[str, str], float]:
    """{(variant, shape): instructions per call} for one bench in one tree; `keep`: a folder to copy
    callgrind's dumps into (`<tree>-<bench>-<variant>-<shape>.cg`, for callgrind_annotate)."""
    python = tree / ".venv" / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"{tree}: no .venv/bin/python (run `uv sync --all-packages` in that tree first)")
    with tempfile.TemporaryDirectory(prefix="gm-cells-") as tmp:
        out = Path(tmp) / "labels.json"
        cmd = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={tmp}/cg",
            "--zero-before=math_lgamma",
            "--dump-before=math_erfc",
            f"--separate-threads={'yes' if threads == 'app' else 'no'}",
            str(python),
            str(Path(__file__).resolve()),
            "--inner",
            bench,
            "--bench-dir",
            str(tree / "bench"),
            "--calls",
            str(calls),
            "--warmup",
            str(warmup),
            "--out",
            str(out),
        ]
        env = dict(
            os.environ, PYTHONHASHSEED="0", GRAPHMIND_HOME=tmp, GM_CELLS_THREADS=threads, GM_CELLS_BENCH=bench
        )
        env["GM_CELLS_NATIVE_NS"] = str(calibration_ns())
        if variants:
            env["GM_CELLS_VARIANTS"] = variants
        run = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        if not out.exists():
            tail = "\n".join((run.stdout + run.stderr).splitlines()[-25:])
            raise SystemExit(f"{tree} {bench}: the counting run failed (exit {run.returncode}):\n{tail}")
        labels = json.loads(out.read_text())
        print(f"  ({tree.name} {bench}: valgrind ran Python {(Path(tmp) / 'slowdown').read_text()}x slower)")
        suffix = "-01" if threads == "app" else ""
        counts: dict[tuple[str, str], float] = {}
        for k, label in enumerate(labels, start=1):
            variant, shape, n = label.split("\t")
            dump = Path(f"{tmp}/cg.{k}{suffix}")
            text = dump.read_text()
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                name = f"{tree.name}-{bench}-{variant}-{shape}.cg".replace(" ", "_").replace(",", "")
                shutil.copyfile(dump, keep / name)
            summary = next(int(line.split()[1]) for line in text.splitlines() if line.startswith("summary:"))
            counts[(variant, shape)] = summary / int(n)
        return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benches", nargs="*", default=["core", "openai"])
    parser.add_argument(
        "--tree", action="append", default=[], help="another checkout (with its .venv) to count"
    )
    parser.add_argument(
        "--calls", type=int, default=200, help="calls counted per cell (a streamed shape: a tenth)"
    )
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--threads", choices=("app", "all"), default="app")
    parser.add_argument("--variants", help="count only these variants (comma-separated; bare always)")
    parser.add_argument("--keep", type=Path, help="copy callgrind's dump of every cell into this folder")
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    parser.add_argument("--bench-dir", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args.inner, args.bench_dir, args.calls, args.warmup, Path(args.out))
        return
    trees = [Path(t).resolve() for t in args.tree] + [HERE.parent]
    for bench in args.benches:
        per_tree = [
            count_tree(tree, bench, args.calls, args.warmup, args.threads, args.keep, args.variants)
            for tree in trees
        ]
        base = BASES.get(bench, "bare")
        print(f"\n{bench}: instructions per call over `{base}` ({args.threads} threads)")
        print(f"  {'cell':<40}" + "".join(f"{t.name[:14]:>16}" for t in trees) + f"{'change':>10}")
        for variant, shape in per_tree[-1]:
            if variant == base:
                continue
            overs = [c[(variant, shape)] - c[(base, shape)] for c in per_tree if (variant, shape) in c]
            change = f"{(overs[-1] / overs[0] - 1) * 100:+9.1f}%" if len(overs) > 1 and overs[0] > 0 else ""
            print(f"  {variant + ' ' + shape:<40}" + "".join(f"{o / 1000:>15.1f}k" for o in overs) + change)
        print(
            "  bare: "
            + ", ".join(f"{s} {per_tree[-1][(base, s)] / 1e6:.2f}M" for v, s in per_tree[-1] if v == base)
        )


if __name__ == "__main__":
    main()
