"""The docs speak to users: no work-log headings, no issue or session numbers outside docs/dev/, and
performance.md short enough to read with a reproduce section whose commands exist as printed."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
USER_DOCS = sorted(
    [p for p in (ROOT / "docs").glob("*.md")]
    + [ROOT / "README.md"]
    + sorted((ROOT / "packages").glob("*/README.md"))
)
# "issue 31", "Issue 37's", "session 15", "sessions 19" (a work log's numbering, not a user's)
_WORK_NUMBER = re.compile(r"\b(?:issue|session)s? \d+", re.IGNORECASE)
# a heading dated like a diary entry: "## Re-check (2026-12-01, 14:34)" or "### ..., 2026-12-01"
_DATED_HEADING = re.compile(r"^#{1,6} .*\b20\d\d-\d\d-\d\d")


def _lines(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text(encoding="utf-8").splitlines(), start=1))


def test_no_issue_or_session_numbers_outside_dev() -> None:
    found = [
        f"{p.relative_to(ROOT)}:{n}: {m.group(0)!r}"
        for p in USER_DOCS
        for n, line in _lines(p)
        for m in [_WORK_NUMBER.search(line)]
        if m
    ]
    assert not found, "work-log numbers in user docs (move the history to docs/dev/):\n" + "\n".join(found)


def test_no_dated_headings_outside_dev() -> None:
    found = [
        f"{p.relative_to(ROOT)}:{n}: {line}"
        for p in USER_DOCS
        for n, line in _lines(p)
        if _DATED_HEADING.match(line)
    ]
    assert not found, "headings named for a date (name them for their subject):\n" + "\n".join(found)


def test_the_checks_catch_what_they_look_for() -> None:
    assert _WORK_NUMBER.search("the fix of issue 39 holds")
    assert _WORK_NUMBER.search("Session 15 re-ran it")
    assert not _WORK_NUMBER.search("the issue is 39 ms")
    assert _DATED_HEADING.match("### Re-check after main moved on (2026-12-01, 14:34)")
    assert not _DATED_HEADING.match("## The table")


def _reproduce_commands() -> list[str]:
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    section = text.split("## How to reproduce", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block, "performance.md's reproduce section has no sh block"
    return [
        line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.split("#", 1)[0].strip()
    ]


def test_performance_md_is_short_and_its_commands_exist() -> None:
    lines = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200, f"docs/performance.md has {len(lines)} lines: the history goes to docs/dev/"
    commands = _reproduce_commands()
    assert len(commands) >= 5
    for command in commands:
        words = shlex.split(command)
        scripts = [w for w in words if w.startswith("bench/")]
        assert scripts, f"not a bench command: {command}"
        script = ROOT / scripts[0]
        assert script.is_file(), f"{command}: {scripts[0]} does not exist"
        source = script.read_text(encoding="utf-8")
        if script.suffix == ".py":
            source += (ROOT / "bench" / "_harness.py").read_text(encoding="utf-8")
            for flag in (w for w in words[words.index(scripts[0]) + 1 :] if w.startswith("--")):
                assert f'"{flag}"' in source, f"{command}: {scripts[0]} takes no {flag}"
        for name in re.findall(r'BENCHES="([^"]+)"', command):
            for bench in name.split():
                assert f"{bench})" in source, f"{command}: bench/table.sh knows no {bench}"
