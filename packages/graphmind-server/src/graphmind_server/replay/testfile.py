"""A stored run as a regression test: a cassette and a pytest file that replays the run through the
app's own command (docs/testing.md, "A run becomes a test").

`graphmind test new` and the viewer's "Save as test" (`POST /api/runs/{id}/tests`) both call
`write_test`: the same two files for the same run. The test runs the run's recorded command
(`meta.argv`, in `meta.cwd`) with the cassette replayed (`graphmind.testing.replay_app`) and
asserts the final answer (or a chosen node's output) equals, contains or matches the expected
value, the recorded one by default.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmind.replay import Cassette, CassetteError, answer_of

from ..base.files import open_private
from ..export.record import Exporter, write_runs
from ..export.source import ExportError, select_runs
from ..store.readonly import snapshot

CHECKS = ("equals", "contains", "matches")
_PYTHON = re.compile(r"^(.*/)?python(\d+(\.\d+)?)?$")


class NotWritten(Exception):
    """The test cannot be written; str() is the one line to print."""


@dataclass(frozen=True)
class Expectation:
    check: str  # equals | contains | matches
    value: Any = None  # None with `recorded`: the recorded answer
    recorded: bool = True

    def __post_init__(self) -> None:
        if self.check not in CHECKS:
            raise NotWritten(f"the expectation must be one of {', '.join(CHECKS)} (got {self.check!r})")
        if self.check != "equals" and not isinstance(self.value, str):
            raise NotWritten(f"{self.check} takes a text (got {json.dumps(self.value)[:60]})")
        if self.check == "matches":
            try:
                re.compile(self.value)
            except re.error as exc:
                raise NotWritten(f"--matches is not a regular expression ({exc}): {self.value!r}") from None


@dataclass(frozen=True)
class Written:
    test: Path
    cassette: Path
    node: str  # the node the answer is read from (`llm:step#3`)
    expected: Any


def command_of(run: dict[str, Any], given: str | None) -> tuple[list[str], Path]:
    """(argv after the interpreter, working directory) to replay the run with: the run's recorded
    command, or `given` (`--command`) for a run that recorded none (an imported or OTLP run, one
    recorded under GRAPHMIND_HIDE_INPUTS)."""
    meta: dict[str, Any] = run["meta"] if isinstance(run.get("meta"), dict) else {}
    cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
    if given is not None:
        words = shlex.split(given)
        if words and _PYTHON.match(words[0]):
            words = words[1:]
        argv = words
    else:
        recorded = meta.get("argv")
        if not (isinstance(recorded, list) and recorded and all(isinstance(a, str) for a in recorded)):
            raise NotWritten(
                f"run {run['id']} recorded no command (an imported or OTLP run, or one under "
                "GRAPHMIND_HIDE_INPUTS): pass --command 'python agent.py' to name the app's entry point"
            )
        argv = [str(a) for a in recorded]
    if not argv or argv[0] in ("-c", "-"):
        raise NotWritten(
            f"run {run['id']} ran from `python -c` or stdin, which a test cannot run again: "
            "pass --command 'python agent.py'"
        )
    return list(argv), Path(cwd) if cwd else Path.cwd()


def write_test(
    conn: sqlite3.Connection,
    run_id: str,
    folder: Path,
    expectation: Expectation,
    *,
    node: str | None = None,
    name: str | None = None,
    command: str | None = None,
) -> Written:
    """Writes `folder/test_<name>.py` and `folder/cassettes/<name>.jsonl` (0600) for the run."""
    with snapshot(conn):
        try:
            runs = select_runs(conn, [run_id], None, None)
        except ExportError as exc:
            raise NotWritten(str(exc)) from None
        run = runs[0]
        run_id = str(run["id"])  # the full id when the command line gave the viewer's short one
        argv, cwd = command_of(run, command)
        stem = _stem(name or f"{run.get('name') or run.get('app') or 'run'}_{run_id[:8]}")
        test_path, cassette_path = folder / f"test_{stem}.py", folder / "cassettes" / f"{stem}.jsonl"
        for path in (test_path, cassette_path):
            if path.exists():
                raise NotWritten(f"{path} exists already; pass another --name")
        cassette_path.parent.mkdir(parents=True, exist_ok=True)
        partial = cassette_path.with_name(cassette_path.name + ".partial")
        try:
            with os.fdopen(open_private(partial), "w", encoding="utf-8", newline="\n") as fh:
                write_runs(conn, runs, "jsonl", fh, Exporter(False, 0))
            recording = Cassette.load(partial)
            try:
                found = answer_of(recording, node)
            except CassetteError as exc:
                raise NotWritten(str(exc).replace(str(partial), f"run {run_id}")) from None
            if found is None and expectation.recorded:
                raise NotWritten(
                    f"run {run_id} has no model step that ended, so no final answer: pass --node "
                    "SELECTOR (an instance id, <nodeId>#<n> or a seq) to test a node's output"
                )
            partial.replace(cassette_path)
        finally:
            partial.unlink(missing_ok=True)
    expected = found.value if found is not None and expectation.recorded else expectation.value
    selector = found.selector if found is not None else "the final answer"
    source = render(run, argv, cwd, test_path, cassette_path, expectation.check, expected, node, selector)
    with os.fdopen(open_private(test_path), "w", encoding="utf-8", newline="\n") as out:
        out.write(source)
    return Written(test_path, cassette_path, selector, expected)


def _stem(text: str) -> str:
    stem = re.sub(r"[^0-9A-Za-z_]+", "_", text).strip("_").lower()
    return stem[:60] or "run"


def _rel(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()


def render(
    run: dict[str, Any],
    argv: list[str],
    cwd: Path,
    test_path: Path,
    cassette_path: Path,
    check: str,
    expected: Any,
    node: str | None,
    selector: str,
) -> str:
    """The pytest file: paths relative to the test file, so the repository can move."""
    here = test_path.parent
    script = Path(argv[0])
    if script.is_absolute() and script.resolve().is_relative_to(cwd.resolve()):
        argv = [_rel(script, cwd), *argv[1:]]
    what = "the final answer" if node is None else f"the output of {selector}"
    assertion = {
        "equals": 'assert actual == EXPECTED, f"expected {EXPECTED!r}, actual {actual!r}"',
        "contains": 'assert EXPECTED in replayed.text(), f"expected {EXPECTED!r} in it, actual {actual!r}"',
        "matches": 'assert re.search(EXPECTED, replayed.text()), f"expected a match of {EXPECTED!r}, actual {actual!r}"',
    }[check]
    imports = "\nimport re" if check == "matches" else ""
    return f'''"""Run {run["id"]} ({run.get("app")}: {run.get("name")}) as a regression test, written by `graphmind test new`.

The app's own command runs with the cassette replayed: every model and tool call is answered from
the recording (no network, no key), and the first call that differs fails the test with its diff.
It asserts that {what} {check} the expected value. Re-record: `graphmind test new RUN_ID`.
"""

from __future__ import annotations
{imports}
from pathlib import Path

from graphmind.testing import replay_app

HERE = Path(__file__).resolve().parent
CASSETTE = HERE / {_rel(cassette_path, here)!r}
APP_DIR = HERE / {_rel(cwd, here)!r}
COMMAND = {argv!r}
NODE = {node!r}  # None: the final answer (the last model step's reply)
EXPECTED = {expected!r}


def test_{_stem(test_path.stem.removeprefix("test_"))}() -> None:
    replayed = replay_app(CASSETTE, COMMAND, cwd=APP_DIR, node=NODE)
    assert replayed.selector, replayed.explain()
    actual = replayed.answer
    {assertion}
'''
