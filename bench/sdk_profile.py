"""Where an agent SDK adapter's per-run cost goes: deterministic cProfile counts, not timings.

    uv run python bench/sdk_profile.py openai-agents [--runs 200] [--shape run|streamed] [--top 25]
    uv run python bench/sdk_profile.py google-adk [--runs 200] [--shape tool|text] [--top 25]
    uv run python bench/sdk_profile.py strands [--runs 200] [--top 25]

Runs the shape of `bench/openai_agents_overhead.py` / `bench/google_adk_overhead.py` (the same
agents, models and tools, imported from them) under cProfile for `--runs` runs after a warm-up,
once per variant: bare, floor (the same hook points passing through: what the framework charges for
any hook there), detached (GraphMind, no hub). Prints per variant the function calls per run
(Python and C, as cProfile counts them) split by where the called function lives: GraphMind (the
adapter and core), the framework, the rest (stdlib, pydantic, OpenTelemetry); then the GraphMind
functions with the most calls and tottime per run. On a shared machine the calls per run are the
figure to compare (within a few calls from run to run); tottime is indicative only.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
from collections.abc import Callable
from typing import Any

from _harness import AttachedHub, openinference_toggle

import graphmind

_GRAPHMIND = (
    "/graphmind/",
    "/graphmind_openai_agents/",
    "/graphmind_google_adk/",
    "/graphmind_strands/",
    "/graphmind-core/",
)
_FRAMEWORK = ("/agents/", "/google/adk/", "/google/genai/", "/strands/")


def _where(filename: str) -> str:
    if any(p in filename for p in _GRAPHMIND):
        return "graphmind"
    if any(p in filename for p in _FRAMEWORK):
        return "framework"
    return "rest"


def profile(fn: Callable[[], Any], runs: int, warm: int) -> pstats.Stats:
    for _ in range(warm):
        fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(runs):
        fn()
    prof.disable()
    return pstats.Stats(prof)


def by_function(stats: pstats.Stats, runs: int) -> dict[str, tuple[float, float]]:
    """(calls, tottime µs) per run of each function, keyed by a short label."""
    out: dict[str, tuple[float, float]] = {}
    for (filename, line, func), (_cc, nc, tt, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        short = filename.split("site-packages/")[-1].split("/src/")[-1]
        out[f"{short}:{line} {func}"] = (nc / runs, tt / runs * 1e6)
    return out


def print_outside(stats: pstats.Stats, base: pstats.Stats, runs: int, top: int) -> None:
    """The functions outside GraphMind whose calls per run differ most from bare's: what GraphMind's
    code calls (stdlib, pydantic, contextvars...) and what the framework does differently."""
    mine, theirs = by_function(stats, runs), by_function(base, runs)
    rows = []
    for label, (calls, us) in mine.items():
        if "graphmind" in label:
            continue
        before = theirs.get(label, (0.0, 0.0))
        if abs(calls - before[0]) >= 0.5:
            rows.append((calls - before[0], us - before[1], label))
    for label, (calls, us) in theirs.items():
        if label not in mine and calls >= 0.5:
            rows.append((-calls, -us, label))
    rows.sort(key=lambda r: -abs(r[0]))
    print(f"{'':<10} outside GraphMind, calls (tottime µs) per run over bare:")
    for calls, us, label in rows[:top]:
        print(f"{'':<12}{calls:+7.2f} {us:+8.2f}  {label}")


def report(
    name: str, stats: pstats.Stats, runs: int, top: int, base: dict[str, float] | None
) -> dict[str, float]:
    totals = {"graphmind": 0.0, "framework": 0.0, "rest": 0.0}
    tot_time = {"graphmind": 0.0, "framework": 0.0, "rest": 0.0}
    rows: list[tuple[float, float, str]] = []
    for (filename, line, func), (_cc, nc, tt, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = _where(filename)
        totals[where] += nc
        tot_time[where] += tt
        if where == "graphmind":
            short = filename.split("/src/")[-1] if "/src/" in filename else filename.rsplit("/", 2)[-1]
            rows.append((nc / runs, tt / runs * 1e6, f"{short}:{line} {func}"))
    per = {k: v / runs for k, v in totals.items()}
    line = "  ".join(f"{k} {v:7.1f} calls ({tot_time[k] / runs * 1e6:7.1f} µs)" for k, v in per.items())
    print(f"\n{name:<10} per run: {line}  all {sum(per.values()):7.1f}")
    if base is not None:
        diff = "  ".join(f"{k} {per[k] - base[k]:+7.1f}" for k in per)
        print(f"{'':<10} over bare: {diff}  all {sum(per.values()) - sum(base.values()):+7.1f}")
    if top and rows:
        rows.sort(key=lambda r: (-r[0], -r[1]))
        print(f"{'':<10} GraphMind functions, calls and tottime µs per run:")
        for calls, us, label in rows[:top]:
            print(f"{'':<12}{calls:6.2f} {us:7.2f}  {label}")
    return per


def openai_agents(
    shape: str, attached: graphmind.Client | None
) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    from openai_agents_overhead import AGENT, REPLY, Floor, Runner, set_trace_processors, set_tracing_disabled

    from graphmind_openai_agents import instrument_openai_agents, uninstrument_openai_agents

    set_tracing_disabled(False)
    set_trace_processors([])
    loop = asyncio.new_event_loop()

    async def streamed() -> Any:
        result = Runner.run_streamed(AGENT, "Plan a day in Cairo")
        async for _ in result.stream_events():
            pass
        return result

    def run() -> None:
        coro = Runner.run(AGENT, "Plan a day in Cairo") if shape == "run" else streamed()
        assert loop.run_until_complete(coro).final_output == REPLY

    session = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)
    floor = Floor()
    oi = openinference_toggle(
        "openinference-instrumentation-openai-agents",
        "openinference.instrumentation.openai_agents",
        "OpenAIAgentsInstrumentor",
        run,
        3,
        "this openai-agents version",
    )
    return {
        "bare": (lambda: None, lambda: None),
        "floor": (floor.on, floor.off),
        "detached": (lambda: instrument_openai_agents(session=session), uninstrument_openai_agents),
        **(
            {"attached": (lambda: instrument_openai_agents(session=attached), uninstrument_openai_agents)}
            if attached is not None
            else {}
        ),
        **({"openinference": oi} if oi is not None else {}),
        "_run": (run, lambda: None),
    }


def google_adk(
    shape: str, attached: graphmind.Client | None
) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    from google_adk_overhead import FloorPlugin, invocation, make_runner

    from graphmind_google_adk import instrument_runner, uninstrument_runner

    loop = asyncio.new_event_loop()
    runner = make_runner()
    invoke = invocation(runner, loop, "weather in Cairo?" if shape == "tool" else "hi")
    session = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)
    floor = FloorPlugin.toggle(runner)
    oi = openinference_toggle(
        "openinference-instrumentation-google-adk",
        "openinference.instrumentation.google_adk",
        "GoogleADKInstrumentor",
        invoke,
        1,
        "this google-adk version",
    )
    return {
        "bare": (lambda: None, lambda: None),
        "floor": floor,
        "detached": (lambda: instrument_runner(runner, session=session), lambda: uninstrument_runner(runner)),
        **(
            {
                "attached": (
                    lambda: instrument_runner(runner, session=attached),
                    lambda: uninstrument_runner(runner),
                )
            }
            if attached is not None
            else {}
        ),
        **({"openinference": oi} if oi is not None else {}),
        "_run": (invoke, lambda: None),
    }


def strands(
    shape: str, attached: graphmind.Client | None
) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """bench/strands_overhead.py's invocation (two model calls, two tools); its peer, Strands' own
    spans on an SDK provider, is the variant `otel`."""
    from strands_overhead import make_agent, otel

    from graphmind_strands import instrument_agent

    # run_until_complete, not asyncio.Runner.run: on 3.11 Runner.run's SIGINT dance formats the
    # repr of the finished task, result included, and Strands' result grows with every invocation
    # of an agent (its metrics keep each one); each variant gets its own agent for the same reason.
    loop = asyncio.new_event_loop()
    agent = [make_agent()]
    n = 0

    def run() -> None:
        nonlocal n
        n += 1
        agent[0].messages.clear()  # a fresh conversation each time, as the bench
        assert str(loop.run_until_complete(agent[0].invoke_async(f"Cairo {n}"))).startswith("Visit")

    session = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=60)

    def fresh(client: graphmind.Client | None = None) -> Callable[[], None]:
        def on() -> None:
            agent[0] = make_agent() if client is None else instrument_agent(make_agent(), session=client)

        return on

    spans_on, spans_off = otel()

    def otel_on() -> None:
        fresh()()
        spans_on()

    return {
        "bare": (fresh(), lambda: None),
        "detached": (fresh(session), lambda: None),
        **({"attached": (fresh(attached), lambda: None)} if attached is not None else {}),
        "otel": (otel_on, spans_off),
        "_run": (run, lambda: None),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("framework", choices=("openai-agents", "google-adk", "strands"))
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warm", type=int, default=30)
    parser.add_argument("--shape", default=None)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--only", default=None, help="variants to run besides bare: floor,detached,openinference"
    )
    parser.add_argument("--dump", default=None, help="write each variant's profile to DUMP.<variant>.prof")
    parser.add_argument(
        "--attached", action="store_true", help="also profile attached to the real hub (a subprocess)"
    )
    args = parser.parse_args()
    hub = AttachedHub("gm-profile-") if args.attached else None
    try:
        _profile_all(args, hub.client if hub is not None else None)
    finally:
        if hub is not None:
            hub.close()


def _profile_all(args: argparse.Namespace, attached: graphmind.Client | None) -> None:
    if args.framework == "openai-agents":
        variants = openai_agents(args.shape or "run", attached)
    elif args.framework == "strands":
        variants = strands(args.shape or "run", attached)
    else:
        variants = google_adk(args.shape or "tool", attached)
    fn = variants.pop("_run")[0]
    base = None
    base_stats = None
    for name, (on, off) in variants.items():
        if args.only and name not in (*args.only.split(","), "bare"):
            continue
        on()
        try:
            stats = profile(fn, args.runs, args.warm)
            if args.dump:
                stats.dump_stats(f"{args.dump}.{name}.prof")
        finally:
            off()
        shown = args.top if name not in ("bare", "openinference", "otel") else 0
        per = report(name, stats, args.runs, shown, base)
        if name == "bare":
            base, base_stats = per, stats
        elif base_stats is not None and shown:
            print_outside(stats, base_stats, args.runs, args.top)


if __name__ == "__main__":
    main()
