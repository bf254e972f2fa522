"""Runs a framework's own test suite bare, instrumented detached, and instrumented attached to a real hub.

    python scripts/suites/run_suite.py openai <source dir> [pytest args...]
    python scripts/suites/run_suite.py anthropic <source dir> [pytest args...]
    python scripts/suites/run_suite.py langchain <source dir> [pytest args...]
    python scripts/suites/run_suite.py mcp|llamaindex|litellm|google_adk|openai-agents|pydantic_ai|strands <source dir> [pytest args...]

Test paths among the pytest args (relative to the source dir) replace the whole suite.

Run it through nox (`uv run nox -s "suite(framework='openai')"`), which installs the suite's
dependencies and fetches the source package. Each of the three runs writes a JUnit XML file;
this script compares them test by test, lists every difference from bare, and ends with one line:
PASS, or FAIL naming why (judge.py): a crashed worker or a pytest run that stopped, a test passing
bare that never ran instrumented, a regression, or (attached) any gate held. A test that passes
bare and fails instrumented (not one of EXPECTED_DIFFERENT, each named with its reason in
docs/compatibility.md) is rerun alone in the same mode (passing there: timing under load), and if
it fails there too, alone bare (failing there as well: its pass in the suite came from the tests
before it in the same worker, not a difference GraphMind makes). Exit status 1 on FAIL.

The attached run is an app with a debugger attached that nobody steers: no breakpoint, the hub's
pauseOnError off (HUB_ARGS), and `GRAPHMIND_ON_LOOP=warn` (the documented way to keep an app from
being held at a loop: docs/protocol.md, "The loop streak"). What the loop guard would have held is
counted and listed per test (each streak's one warning), not answered by anyone.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import judge  # noqa: E402  (beside this script, which runs as a file)
from suite_table import EXPECTED_DIFFERENT, SUITES  # noqa: E402

# Every suite's hub alike: suites raise errors on purpose (API errors, failing tools, tripped
# guardrails, retries), and with the hub's default pauseOnError=on each would hold at its error
# gate, a hold nobody answers. The attached run counts the node errors it did not hold.
HUB_ARGS = ["--pause-on-error", "off"]
# Instrumented runs: a loop streak warns (once per streak, naming the node) instead of holding.
ON_LOOP = "warn"
# The hub is ready when it prints its listening line (HubProcess returns then, or at once when its
# process exits); this bounds only a hub that hangs with neither, on a loaded machine.
HUB_START_S = 300.0
# A gate still held this long past the suite's per-test timeout is released `continue` by the
# harness, so that the run can finish; the run FAILs all the same (any hold is one nobody answers).
HOLD_GRACE_S = 30.0


def _cases(junit: Path) -> list[ET.Element]:
    """The JUnit file's test cases; none when pytest wrote no file (it stopped before the end)."""
    if not junit.is_file():
        return []
    try:
        return list(ET.parse(junit).getroot().iter("testcase"))
    except ET.ParseError:
        return []


def outcomes(junit: Path) -> dict[str, str]:
    result: dict[str, str] = {}
    for case in _cases(junit):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        if "failure" in kinds or "error" in kinds:
            result[name] = "failed"
        elif "skipped" in kinds:
            result[name] = "skipped"
        else:
            result[name] = "passed"
    return result


def durations(junit: Path) -> dict[str, float]:
    """Each test's time (JUnit's `time`: setup, call and teardown)."""
    return {
        f"{case.get('classname')}::{case.get('name')}": float(case.get("time") or 0) for case in _cases(junit)
    }


def node_id(src: Path, junit_name: str) -> str:
    """`tests.x.test_mod.TestCls::test_a[p]` (JUnit's classname::name) -> `tests/x/test_mod.py::TestCls::test_a[p]`."""
    classname, name = junit_name.split("::", 1)
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        path = Path(*parts[:cut]).with_suffix(".py")
        if (src / path).is_file():
            return "::".join([path.as_posix(), *parts[cut:], name])
    return junit_name


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pytest_timeout(options: list[str]) -> float:
    """The suite's per-test timeout (`--timeout=N`), 120 s when it names none."""
    for option in options:
        if option.startswith("--timeout="):
            return float(option.split("=", 1)[1])
    return 120.0


def _tee(proc: subprocess.Popen[str], log: Path) -> list[str]:
    """Copies the run's output to this process's stdout and to `log`; returns its lines."""
    lines: list[str] = []
    assert proc.stdout is not None
    with log.open("w", encoding="utf-8") as out:
        for line in proc.stdout:
            sys.stdout.write(line)
            out.write(line)
            lines.append(line)
    sys.stdout.flush()
    return lines


def run(
    name: str,
    src: Path,
    mode: str,
    extra: list[str],
    work: Path,
    hub_url: str | None,
    only: list[str] | None = None,
) -> dict[str, Any]:
    """One pytest run of the suite; `only`: these tests alone, one process (a rerun)."""
    suite = SUITES[name]
    label = f"{mode}-rerun" if only else mode
    junit = work / f"{name}-{label}.xml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    for key in [k for k in env if k.startswith(("GRAPHMIND_", "PYTEST_"))]:
        del env[key]
    env.update(suite.get("env", {}))
    options = suite["args"]
    paths = [a for a in extra if not a.startswith("-") and (src / a.split("::")[0]).exists()]
    if only or paths:
        options = options[1:]  # test paths given: they replace the whole suite
    elif suite.get("paths"):  # the suite's selection replaces its root (globs expanded in src)
        selected = [str(p.relative_to(src)) for pattern in suite["paths"] for p in sorted(src.glob(pattern))]
        options = [*selected, *options[1:]]
    if only:
        extra = [a for a in extra if a not in paths]
    leaks = suite.get("leaks", [])
    system_tmp = Path(tempfile.gettempdir())
    if leaks:  # its temporary files in a directory of this run's, removed with `work`
        env["TMPDIR"] = str(work / f"tmp-{label}")
        Path(env["TMPDIR"]).mkdir(exist_ok=True)
    before = left_behind(system_tmp, leaks)
    args = [sys.executable, "-m", "pytest", *options, f"--junitxml={junit}", *extra]
    if only:
        args += ["-n", "0", *only]
    if mode == "bare":
        env["GRAPHMIND_DISABLED"] = "1"
    else:
        # gm_suite_report: what GraphMind did, and the loop streaks it warned about, per test.
        # (first: the suite's plugin imports it, and pytest cannot load as a plugin a module
        # imported already; under a suite's `filterwarnings = error` that warning stops pytest)
        args[3:3] = ["-p", "gm_suite_report", "-p", suite["plugin"]]
        env["GRAPHMIND_URL"] = hub_url or f"ws://127.0.0.1:{closed_port()}/ingest"
        env["GRAPHMIND_ON_LOOP"] = ON_LOOP
        env["GRAPHMIND_SUITE_REPORT"] = str(work / f"{name}-{label}")
    started = time.monotonic()
    proc = subprocess.Popen(
        args, cwd=src, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    )
    lines = _tee(proc, work / f"{name}-{label}.log")
    exit_code = proc.wait()
    seconds = time.monotonic() - started
    counts: dict[str, Any] = {}
    loop_warned: dict[str, list[str]] = {}
    for part in work.glob(f"{name}-{label}.*.json"):
        data = json.loads(part.read_text())
        stats = data.pop("stats", {})
        for test, nodes in data.pop("loop_warned", {}).items():
            loop_warned.setdefault(test, []).extend(nodes)
        for key, value in [
            *data.items(),
            *((k, stats.get(k, 0)) for k in ("events", "sent", "dropped")),
        ]:
            counts[key] = counts.get(key, 0) + int(value)
    return {
        "mode": mode,
        "exit": exit_code,
        "crashes": judge.crashes(lines),
        "seconds": seconds,
        "outcomes": outcomes(junit),
        "durations": durations(junit),
        "counts": counts,
        "loop_warned": loop_warned,
        "leaked": [str(system_tmp / n) for n in sorted(left_behind(system_tmp, leaks) - before)],
    }


def left_behind(folder: Path, patterns: list[str]) -> set[str]:
    """The names in `folder` (the system's temp dir) that match a suite's `leaks` patterns."""
    return {p.name for pattern in patterns for p in folder.glob(pattern)}


class HoldWatch:
    """While the attached run goes on: every gate the hub lists is noted (any hold FAILs the run:
    nobody answers), and one still held `release_after` seconds after it was first seen is
    released `continue`, so that a worker waiting on it (an async test's timeout never cancels the
    held task: docs/timeouts.md) lets the run finish."""

    def __init__(self, port: int, release_after: float) -> None:
        self.port = port
        self.release_after = release_after
        self.seen: dict[str, float] = {}
        self.released: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="hold-watch", daemon=True)

    def __enter__(self) -> HoldWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _watch(self) -> None:
        from graphmind_server.testing import api_call

        base = f"http://127.0.0.1:{self.port}"
        while not self._stop.wait(2.0):
            try:
                gates = api_call(base, "GET", "/api/gates", timeout=30)[1]["gates"]
                now = time.monotonic()
                for gate in gates:
                    first = self.seen.setdefault(gate["gateId"], now)
                    if now - first >= self.release_after and gate["gateId"] not in self.released:
                        api_call(
                            base, "POST", f"/api/gates/{gate['gateId']}", {"action": "continue"}, timeout=30
                        )
                        self.released.append(gate["gateId"])
                        print(
                            f"[suite] {gate['nodeId']} held at its {gate['gate']} gate ({gate['reason']}) for "
                            f"{now - first:.0f} s: released by the harness so the run can finish; the run FAILs",
                            flush=True,
                        )
            except (OSError, KeyError, TypeError, ValueError):
                pass  # the hub busy: the next round asks again


def hub_counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return {
            "hub_runs": conn.execute("SELECT count(*) FROM runs").fetchone()[0],
            "hub_nodes": conn.execute("SELECT count(*) FROM nodes").fetchone()[0],
            "hub_events": conn.execute("SELECT count(*) FROM events").fetchone()[0],
            # pauseOnError is off (HUB_ARGS): none of these was held at its error gate.
            "hub_node_errors": conn.execute(
                "SELECT count(*) FROM events WHERE type = 'node.error'"
            ).fetchone()[0],
        }


def hub_holds(db: Path) -> list[dict[str, Any]]:
    """Every gate held in the attached run, and how it ended (judge.holds)."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT type, body FROM events WHERE type IN ('exec.paused', 'exec.resumed') ORDER BY cursor"
        ).fetchall()
    return judge.holds(rows)


SLOWER_S = 5.0  # a test this much slower than bare is named (what makes a run slow: a hold, a wait)


def regressions(
    name: str,
    result: dict[str, Any],
    passed_bare: set[str],
    rerun: dict[str, Any] | None,
    bare_alone: dict[str, str],
) -> list[str]:
    """Tests passing bare that ran here and failed, failed alone here too, and pass alone bare."""
    out = result["outcomes"]
    alone = rerun["outcomes"] if rerun else {}
    return sorted(
        t
        for t in passed_bare
        if t in out
        and out[t] != "passed"
        and t not in EXPECTED_DIFFERENT[name]
        and alone.get(t) != "passed"
        and bare_alone.get(t) == "passed"
    )


def report(
    name: str,
    result: dict[str, Any],
    passed_bare: set[str],
    rerun: dict[str, Any] | None,
    bare: dict[str, Any] | None = None,
    bare_alone: dict[str, str] | None = None,
) -> list[str]:
    """Prints one run's line, each of its differences from bare (a test passing bare that did not
    pass or never ran here, one passing here that fails bare), what it would have held, the tests
    SLOWER_S slower than bare (the five worst); returns why the run is not transparent
    (judge.failures, empty when it is)."""
    out = result["outcomes"]
    tally = {k: sum(1 for o in out.values() if o == k) for k in ("passed", "failed", "skipped")}
    lost = sorted(t for t in passed_bare if out.get(t) != "passed")
    missing = [t for t in lost if t not in out]
    alone = rerun["outcomes"] if rerun else {}
    # Failing alone bare too: the suite's pass depended on what ran before it in the same worker
    # (xdist's split differs from run to run), not on GraphMind.
    alone_bare = bare_alone or {}
    regressed = regressions(name, result, passed_bare, rerun, alone_bare) if bare is not None else []
    print(
        f"[suite {name}] {result['mode']:8} {len(out)} tests: {tally['passed']} passed, {tally['failed']} failed, "
        f"{tally['skipped']} skipped; {len(lost)} passing bare do not pass here ({len(missing)} never ran), "
        f"{len(regressed)} regressed; exit {result['exit']}; {result['seconds']:.0f} s; {json.dumps(result['counts'])}"
    )
    for crash in result.get("crashes", []):
        print(f"    CRASHED: {crash}")
    for path in result.get("leaked", []):
        print(f"    LEFT BEHIND: {path}")
    for test in lost:
        why = (
            "MISSING: it never ran in this run"
            if test not in out
            else "expected (named in docs/compatibility.md)"
            if test in EXPECTED_DIFFERENT[name]
            else "passes when rerun alone (timing under load)"
            if alone.get(test) == "passed"
            else "fails alone bare too (its pass in the suite depends on the tests before it)"
            if alone_bare.get(test) != "passed"
            else "REGRESSED"
        )
        print(f"    {test}: {out.get(test, 'missing')}; {why}")
    if bare is not None:
        for test in sorted(
            t for t, o in out.items() if o == "passed" and bare["outcomes"].get(t) != "passed"
        ):
            print(f"    {test}: passes here, {bare['outcomes'].get(test, 'missing')} bare")
    warned = result.get("loop_warned", {})
    if warned:
        print(
            f"    loop streaks warned, not held (GRAPHMIND_ON_LOOP={ON_LOOP}): {sum(map(len, warned.values()))} "
            f"in {len(warned)} tests; attached with the default (pause) each would hold:"
        )
        for test, nodes in sorted(warned.items()):
            print(f"      {test}: {', '.join(sorted(set(nodes)))}")
    for hold in result.get("holds", []):
        print(
            f"    HELD: {hold['nodeId']} at its {hold['gate']} gate, reason {hold['reason']}, ended by {hold['by']}"
        )
    if bare is not None:
        before = bare["durations"]
        grown = sorted(
            ((t - before.get(test, 0.0), test) for test, t in result["durations"].items()),
            reverse=True,
        )
        slower = [(d, test) for d, test in grown if d >= SLOWER_S]
        for _grew, test in slower[:5]:
            print(
                f"    slower: {test}: {result['durations'][test]:.1f} s, bare {before.get(test, 0.0):.1f} s"
            )
        if len(slower) > 5:
            print(f"    slower: {len(slower) - 5} more tests took {SLOWER_S:.0f} s or more longer than bare")
    return judge.failures(result["mode"], result, passed_bare, regressed)


def instrumented(
    name: str, src: Path, mode: str, extra: list[str], work: Path, hub_url: str | None, passed_bare: set[str]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The instrumented run, and a rerun alone of what passed bare but failed here (a wall-clock
    assertion can fail on a loaded machine with two workers; alone it shows whether GraphMind
    breaks it). A test that never ran here is not rerun: it is a failure of this run as it is."""
    result = run(name, src, mode, extra, work, hub_url)
    out = result["outcomes"]
    suspects = [
        t for t in passed_bare if t in out and out[t] != "passed" and t not in EXPECTED_DIFFERENT[name]
    ]
    rerun = (
        run(name, src, mode, extra, work, hub_url, only=[node_id(src, t) for t in suspects])
        if suspects
        else None
    )
    return result, rerun


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in SUITES:
        print(__doc__, file=sys.stderr)
        return 2
    name, src, extra = argv[0], Path(argv[1]).resolve(), argv[2:]
    from graphmind_server.testing import HubProcess

    with tempfile.TemporaryDirectory(prefix=f"gm-suite-{name}-") as tmp:
        work = Path(tmp)
        bare = run(name, src, "bare", extra, work, None)
        passed_bare = {t for t, o in bare["outcomes"].items() if o == "passed"}
        detached = instrumented(name, src, "detached", extra, work, None, passed_bare)
        release_after = _pytest_timeout(SUITES[name]["args"]) + HOLD_GRACE_S
        hub = HubProcess(work / "hub.db", args=HUB_ARGS, start_timeout=HUB_START_S)
        with hub, HoldWatch(hub.port, release_after):
            attached = instrumented(name, src, "attached", extra, work, hub.ingest_url, passed_bare)
        # The hub stopped (SIGINT): it wrote what it had before it exited.
        attached[0]["counts"].update(hub_counts(work / "hub.db"))
        attached[0]["holds"] = hub_holds(work / "hub.db")
        # What failed alone instrumented, alone bare: the same test, the same single process.
        failed_alone = sorted(
            {
                t
                for _, rerun in (detached, attached)
                if rerun
                for t, o in rerun["outcomes"].items()
                if o != "passed"
            }
        )
        bare_alone = (
            run(name, src, "bare", extra, work, None, only=[node_id(src, t) for t in failed_alone])[
                "outcomes"
            ]
            if failed_alone
            else {}
        )
    reasons = {
        "bare": report(name, bare, passed_bare, None),
        "detached": report(name, detached[0], passed_bare, detached[1], bare, bare_alone),
        "attached": report(name, attached[0], passed_bare, attached[1], bare, bare_alone),
    }
    print(judge.verdict(name, reasons), flush=True)
    return 1 if any(reasons.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
