"""`replay_app`: run an app's own command with a cassette replayed and read its answer, for the tests
`graphmind test new` writes (docs/testing.md, "A run becomes a test").

The command runs as its own process (the app's entry point, in its working directory) with the
replay set up through the environment, as `graphmind replay` sets it: every model and tool call is
answered from the cassette, and the first call that differs fails the run (`on_divergence`
`fail`). Its events go to an in-process `FakeHub` on loopback, which is how the answer is read; no
network, no provider key, no real hub.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import protocol as proto
from .._replay.answer import answer_of
from .._replay.settings import _ENV_FIELDS, ENV, REPORT_ENV
from ._fakehub import FakeHub


@dataclass
class Replayed:
    """What one replay of the app did: its exit code, output, events and answer."""

    returncode: int
    stdout: str
    stderr: str
    events: list[dict[str, Any]] = field(default_factory=list)
    divergence: str = ""  # the first divergence, as `graphmind replay` prints it
    answer: Any = None
    selector: str = ""  # the node the answer came from (`llm:step#3`)

    def text(self) -> str:
        """The answer as text, for `contains` / `matches`: a string as it is, anything else as JSON."""
        return self.answer if isinstance(self.answer, str) else json.dumps(self.answer, sort_keys=True)

    def explain(self) -> str:
        """Why a replay gave no answer, in a few lines, for an assertion message."""
        if self.divergence:
            return f"the replay diverged: {self.divergence}"
        tail = "\n".join(self.stderr.strip().splitlines()[-15:])
        return f"the app exited {self.returncode} with no answer:\n{tail}"


def replay_app(
    cassette: str | os.PathLike[str],
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    node: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> Replayed:
    """Runs `python *argv` (this interpreter) in `cwd` with `cassette` replayed; the answer is the
    run's final answer or `node`'s output (graphmind.replay.answer_of's rule)."""
    with FakeHub() as hub, tempfile.TemporaryDirectory(prefix="graphmind-test-") as tmp:
        # A breakpoint in the app's code holds at this hub: nobody is there to answer it in a test.
        hub.auto_answer("continue")
        report = Path(tmp) / "divergence.txt"
        # A replay setting of the caller's (a fork, `only`) is not this test's: only the cassette.
        outer = {k: v for k, v in os.environ.items() if not k.startswith(ENV)}
        environ = {
            **outer,
            **(env or {}),
            ENV: str(Path(cassette).resolve()),
            _ENV_FIELDS["on_divergence"]: "fail",
            REPORT_ENV: str(report),
            "GRAPHMIND_URL": hub.url,
        }
        done = subprocess.run(
            [sys.executable, *argv],
            cwd=cwd,
            env=environ,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        started = {e.get("runId") for e in hub.of_type(proto.RUN_STARTED)}
        # The app flushed its events before it exited; a run cut short (a crash) never ends: the
        # answer is then read from what arrived, and `explain()` says how the app exited.
        with contextlib.suppress(TimeoutError):
            hub.wait_for(
                lambda: started <= {e.get("runId") for e in hub.of_type(proto.RUN_FINISHED)},
                5,
                "the replayed run's end",
            )
        events = list(hub.events)
        try:  # before the temporary directory, and the report in it, is removed
            divergence = report.read_text(encoding="utf-8").split("\n\f\n")[0].strip()
        except OSError:
            divergence = ""
    replayed = Replayed(done.returncode, done.stdout, done.stderr, events, divergence)
    if not divergence:
        found = answer_of(events, node)
        if found is not None:
            replayed.answer, replayed.selector = found.value, found.selector
    return replayed
