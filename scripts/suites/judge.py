"""How run_suite.py judges a framework's suite run bare, detached and attached: what makes a run
not transparent, and the one line that says so.

A run of the suite is transparent when every test that passes bare passes instrumented. It is not
when, in any of the three runs:

- a pytest-xdist worker crashed or pytest stopped on an internal error (`INTERNALERROR`, "node
  down", "crashed while running"), or pytest ended with an exit code that means it did not run the
  suite through (interrupted, internal error, usage error, no tests);
- a test that passed bare is missing (it never ran: a crashed worker took it with it). A missing
  test is never excused by a rerun: the run that should have run it did not;
- a test that passed bare fails instrumented, and passes alone bare but not alone instrumented
  (a regression; one that passes when rerun alone is named, as timing under load);
- attached, a gate held at all: the run answers nothing and sets no breakpoint, pauseOnError is off
  and loop holds only warn (`GRAPHMIND_ON_LOOP=warn`), so any hold is one nobody answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

# pytest's exit codes that mean the suite was not run through: interrupted (a KeyboardInterrupt, a
# `pytest.exit`), an internal error, a usage error, no tests collected. 0 and 1 (some tests failed)
# are runs that finished.
INCOMPLETE_EXITS = {2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests collected"}

# What pytest and pytest-xdist print when a worker dies or pytest's own machinery fails.
_CRASH_LINES = (
    re.compile(r"^\[?(?P<worker>gw\d+)\]? node down: (?P<why>.+)$"),
    re.compile(r"worker '?(?P<worker>gw\d+)'? crashed while running '?(?P<why>[^']+)'?"),
    re.compile(r"^replacing crashed worker (?P<worker>gw\d+)"),
    re.compile(r"^maximum crashed workers reached"),
)
_INTERNAL = "INTERNALERROR>"
# The exception line of an INTERNALERROR traceback: `INTERNALERROR> SystemError: AST constructor ...`
_EXCEPTION_LINE = re.compile(
    r"^INTERNALERROR>\s+(?:E\s+)?(?P<error>[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b.*)$"
)


def crashes(lines: Iterable[str]) -> list[str]:
    """One short line per crash seen in a pytest run's output: each worker that went down, and each
    INTERNALERROR traceback block with the exceptions it names (pytest's own, or a worker's that
    pytest-xdist relays)."""
    found: list[str] = []
    errors: list[str] | None = None  # the exceptions of the INTERNALERROR block being read

    def close_block() -> None:
        if errors is not None:
            named = "; ".join(dict.fromkeys(errors)) or "(no exception line)"
            found.append(f"INTERNALERROR {named}")

    for raw in lines:
        line = raw.rstrip("\n")
        if line.startswith(_INTERNAL):
            if errors is None:
                errors = []
            match = _EXCEPTION_LINE.match(line)
            if match and not match.group("error").endswith("Traceback (most recent call last):"):
                errors.append(match.group("error").strip())
            continue
        close_block()
        errors = None
        for pattern in _CRASH_LINES:
            if pattern.search(line.strip()):
                found.append(line.strip())
                break
    close_block()
    return list(dict.fromkeys(found))  # each once, in order


def incomplete(exit_code: int) -> str | None:
    """Why pytest's exit code says the suite was not run through, or None."""
    if exit_code in INCOMPLETE_EXITS:
        return f"pytest exit code {exit_code} ({INCOMPLETE_EXITS[exit_code]})"
    if exit_code < 0:
        return f"pytest was killed by signal {-exit_code}"
    return None


def holds(rows: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """The gates held in a run, from the hub's `exec.paused` / `exec.resumed` events (type, JSON
    body): each with its node, reason and how it ended (`by`: the hub, the app's dispose, a
    cancelled task; `None`: still held)."""
    held: dict[tuple[Any, Any], dict[str, Any]] = {}
    for kind, body in rows:
        try:
            event = json.loads(body)
        except ValueError:
            continue
        key = (event.get("instanceId"), event.get("gateId"))
        if kind == "exec.paused":
            held[key] = {
                "nodeId": event.get("nodeId"),
                "gate": event.get("gate"),
                "reason": event.get("reason"),
                "by": None,
            }
        elif kind == "exec.resumed" and key in held:
            held[key]["by"] = event.get("by")
    return list(held.values())


def failures(
    mode: str,
    result: Mapping[str, Any],
    passed_bare: set[str],
    regressed: list[str],
) -> list[str]:
    """Why this run (bare, detached or attached) is not transparent, one phrase per reason."""
    why: list[str] = []
    stopped = incomplete(int(result.get("exit", 0)))
    if stopped:
        why.append(stopped)
    for crash in result.get("crashes", []):
        why.append(f"crashed: {crash}")
    if mode != "bare":
        missing = sorted(t for t in passed_bare if t not in result["outcomes"])
        if missing:
            why.append(f"{len(missing)} tests passing bare never ran (first: {missing[0]})")
        if regressed:
            why.append(f"{len(regressed)} regressed (first: {regressed[0]})")
    leaked = result.get("leaked", [])
    if leaked:
        why.append(f"left {len(leaked)} file(s) in the system's temp dir (first: {leaked[0]})")
    for hold in result.get("holds", []):
        ended = "still held" if hold["by"] is None else f"ended by {hold['by']}"
        why.append(
            f"a hold nobody answers: {hold['nodeId']} {hold['gate']} gate, reason {hold['reason']} ({ended})"
        )
    return why


def verdict(name: str, reasons: Mapping[str, list[str]]) -> str:
    """The run's one line: PASS, or FAIL naming every run's reasons."""
    failed = {mode: why for mode, why in reasons.items() if why}
    if not failed:
        return (
            f"[suite {name}] PASS: every run complete (no crashed worker, no missing test, no hold); "
            "every test that passes bare passes detached and attached (the differences are listed above)"
        )
    parts = [f"{mode}: {'; '.join(why)}" for mode, why in failed.items()]
    return f"[suite {name}] FAIL: " + " | ".join(parts)
