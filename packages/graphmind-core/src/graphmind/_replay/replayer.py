"""What a replay decides for each call, once, at its before gate (docs/replay.md).

Calls are matched in execution order per logical node: the n-th call of node id X is the n-th
recorded execution of X, and matches when its canonical input equals the recorded one. A match
hands back the recorded output (or error); anything else is a divergence, and the policy says
what then. Once the replay goes live (a `live` divergence, a continue at a held one, the fork,
`until`), nothing later is replayed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .. import protocol as proto
from .._base import forksafe
from .cassette import Cassette, Recorded
from .match import Matcher, unreplayable
from .settings import NOTHING, REPORT_ENV, ReplaySettings

# A node is a _node.record.NodeRecord (not imported: record.py imports this module).
NodeRecord = Any

# What `decide` says
REPLAY, FORK_OUTPUT, FORK_INPUT, DIVERGED = "replay", "fork-output", "fork-input", "diverged"


@dataclass(frozen=True, slots=True)
class Decision:
    kind: str
    occurrence: int
    recorded: Recorded | None = None
    why: str = ""
    value: Any = None  # the fork's output or input

    def usable(self) -> bool:
        """A divergence whose recorded output could still be used ("recorded")."""
        rec = self.recorded
        return rec is not None and rec.ended and rec.error is None and unreplayable(rec.output) is None


class Replayer:
    def __init__(self, cassette: Cassette, settings: ReplaySettings) -> None:
        self.cassette = cassette
        self.settings = settings
        self.source = settings.source
        self.matcher = Matcher(settings.ignore_keys)
        self.fork = cassette.find(settings.fork) if settings.fork is not None else None
        self.until = cassette.find(settings.until) if settings.until is not None else None
        self.active = True  # False once the replay went live: nothing later is replayed
        self._counts: dict[str, int] = {}
        self._lock = forksafe.lock()
        self.replayed = 0
        # `graphmind replay` names a file here: a `fail` divergence is written to it for the command's
        # own one-paragraph report (the app's traceback may be swallowed or buried).
        self.report_to = os.environ.get(REPORT_ENV) or None
        self.failures: list[BaseException] = []

    def report(self, error: BaseException) -> None:
        self.failures.append(error)  # the pytest plugin fails the test with it, caught or not
        if self.report_to is None:
            return
        try:
            with open(self.report_to, "a", encoding="utf-8") as out:
                out.write(str(error) + "\n\f\n")
        except OSError:
            pass

    @property
    def run_fields(self) -> dict[str, Any]:
        """What every run.started of the replaying client carries."""
        fields: dict[str, Any] = {}
        if self.cassette.run_id is not None:
            fields["replayOf"] = self.cassette.run_id
        target = self.fork or self.until
        if target is not None:
            fields["forkedAt"] = target.selector
        if self.settings.batch:
            fields["replayBatch"] = self.settings.batch
        return fields

    def runs_live(self, node: NodeRecord) -> bool:
        """A call `only=` leaves to run live (a tool under only="llm"): the recording does not answer
        it, and a write among them is guarded as after a divergence (the replay's safe mode)."""
        only = self.settings.only
        return only is not None and node.spec.kind != only

    def go_live(self) -> None:
        self.active = False

    def policy(self, attached: bool) -> str:
        chosen = self.settings.on_divergence
        if chosen is None:
            return "hold" if attached else "fail"
        return chosen

    def decide(self, node: NodeRecord) -> Decision | None:
        """None: run this call live (as if no replay were set)."""
        node_id = node.node_id
        if self.runs_live(node):
            return None  # only= chose to run it live; the calls the recording answers go on matching
        with self._lock:
            if not self.active:
                return None
            occurrence = self._counts.get(node_id, 0) + 1
            self._counts[node_id] = occurrence
        actions = node.spec.actions
        if actions is not None and proto.INJECT not in actions:
            return None  # a node nothing can answer for (a span, an observe-only call): it runs
        rec = self.cassette.get(node_id, occurrence)
        if rec is None:
            return Decision(
                DIVERGED, occurrence, None, f"the recording has no call #{occurrence} of {node_id}"
            )
        if rec.container:
            return None  # its body runs, and the calls inside it replay
        if rec is self.until:
            self.go_live()
            return None
        if not self.matcher.same(rec.input, node.spec.input):
            return Decision(DIVERGED, occurrence, rec, "its input differs from the recording")
        if rec is self.fork:
            self.go_live()
            if self.settings.output is not NOTHING:
                return Decision(FORK_OUTPUT, occurrence, rec, value=self.settings.output)
            return Decision(FORK_INPUT, occurrence, rec, value=self.settings.input)
        if not rec.ended:
            return Decision(
                DIVERGED, occurrence, rec, "the recording has no ending for it (the run was cut short)"
            )
        if rec.error is None:
            why = unreplayable(rec.output)
            if why is not None:
                return Decision(DIVERGED, occurrence, rec, why)
        return Decision(REPLAY, occurrence, rec)

    def paused_fields(self, node: NodeRecord, decision: Decision) -> dict[str, Any]:
        """The divergence fields of exec.paused (docs/protocol.md, "Replay")."""
        rec = decision.recorded
        return {
            "input": node.spec.input,
            "expected": rec.input if rec is not None else None,
            "replay": {"source": self.source, "occurrence": decision.occurrence, "why": decision.why},
        }

    def diff(self, node: NodeRecord, decision: Decision) -> str:
        """The divergence's diff, of both inputs as an event would carry them: the text lands in
        `node.error` and `run.finished`, where the pipeline hides no value, so a hidden input
        (the hide switches, `mask=`) must be hidden before the diff is built."""
        rec = decision.recorded
        if rec is None:
            return ""
        recorded, actual = _shown(node, rec.input), _shown(node, node.spec.input)
        text = self.matcher.diff(recorded, actual)
        # They differ (the matcher said so), but not where an event may show them.
        return text or "(the inputs differ only where the hide switches or mask= hide them: no diff shown)"


def _shown(node: NodeRecord, value: Any) -> Any:
    """`value` as the node's input field of an event: the one redaction pass (hide switches, mask)."""
    scrub = node.host.scrub
    if scrub is None:
        return value
    event = scrub(
        {"type": proto.NODE_STARTED, "nodeId": node.node_id, "kind": node.spec.kind, "input": value}
    )
    return proto.REDACTED if event is None else event.get("input", proto.REDACTED)
