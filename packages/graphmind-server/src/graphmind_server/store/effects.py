"""A run's effects ledger (docs/effects.md, "The ledger"): every `write` and `unknown` tool call, in
order, with its input, what became of it (it ran, was held then ran, was simulated, injected,
replayed or skipped) and whose answer decided it.

Derived from the run's stored events on each read, so an imported run (`graphmind import`) has the
same ledger as the run it was exported from, and nothing is kept twice. `fold` is pure (events in,
entries out); `run_ledger` is the read the API, the CLI, the export and `graphmind diff` share.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from graphmind import protocol as proto

from .proposals import audit_line, run_proposals
from .status import ABORTED_ERROR, split_node_id

# The effect classes a ledger lists (a `read` call and a model call never are: docs/effects.md).
LISTED = (proto.WRITE, proto.UNKNOWN)
# What became of a call: the app's own verdict on the ending (`effect.outcome`, protocol.py
# EFFECT_OUTCOMES), or, for a call not ended yet, `held` / `running`. `ran` and `held then ran` ran
# its body for real; so may `running` (its body may be running now), so it counts as ran too.
HELD_THEN_RAN = "held then ran"
OUTCOMES = (*proto.EFFECT_OUTCOMES, "held", "running")
RAN = ("ran", HELD_THEN_RAN, "running")
_TYPES = ("node.started", "exec.paused", "exec.resumed", "node.attempt", "node.finished", "node.error")
_CHUNK = 2000


def effect_of(started: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """(class, source) of a `node.started`, None when it carries none (a model call, an app that
    predates effect classes). Read the same way by the hub's gate list (api.py)."""
    effect = started.get("effect")
    if not isinstance(effect, Mapping):
        return None
    cls = effect.get("class")
    if not isinstance(cls, str):
        return None
    source = effect.get("source")
    return cls, source if isinstance(source, str) else None


class _Call:
    """One effectful execution while its events are folded."""

    def __init__(self, number: int, started: Mapping[str, Any], cls: str, source: str | None) -> None:
        node_id = started.get("nodeId")
        node_id = node_id if isinstance(node_id, str) else ""
        self.entry: dict[str, Any] = {
            "n": number,
            "nodeId": node_id,
            "name": started.get("name")
            if isinstance(started.get("name"), str)
            else split_node_id(node_id)[1],
            "instanceId": started.get("instanceId"),
            "seq": started.get("seq"),
            "ts": started.get("ts"),
            "class": cls,
            "source": source,
            "input": started.get("input"),
        }
        self.held_at: str | None = None  # the gate held now
        self.held_before = False
        self.reason: str | None = None  # why the before gate held (`effect`, `breakpoint`, ...)
        self.answer: dict[str, Any] | None = None  # the before gate's answer
        self.attempts = 0  # bodies that ended in a retry (node.attempt)
        self.ended: Mapping[str, Any] | None = None
        self.answered_late = False  # an after or error gate of it was answered

    def see(self, ev: Mapping[str, Any]) -> None:
        kind = ev.get("type")
        if kind == "exec.paused":
            self.held_at = ev.get("gate") if isinstance(ev.get("gate"), str) else "before"
            if self.held_at == "before":
                self.held_before = True
                self.reason = ev.get("reason") if isinstance(ev.get("reason"), str) else None
        elif kind == "exec.resumed":
            if self.held_at == "before" or ev.get("gate") == "before":
                self.answer = _answer(ev)
            else:
                self.answered_late = True  # an after or error gate: the body had run
            self.held_at = None
        elif kind == "node.attempt":
            self.attempts += 1
        elif kind in ("node.finished", "node.error"):
            self.ended = ev
            self.held_at = None

    def result(self) -> dict[str, Any]:
        outcome, ran = self._outcome()
        end = self.ended or {}
        said = end.get("effect")
        verdict: Mapping[str, Any] = said if isinstance(said, Mapping) else {}
        if verdict.get("outcome") in proto.EFFECT_OUTCOMES:  # the app's own verdict wins
            outcome = verdict["outcome"]
            # ...but whether the body ran is the events' say for `injected`: a value injected at
            # the after or error gate replaced what the body, which did run, returned.
            ran = ran if outcome == "injected" else outcome in RAN
        entry = dict(self.entry)
        if end.get("edited") is True and "input" in end:
            # what the write ran with: a person edited it at a gate (docs/protocol.md, "Recording")
            entry["input"], entry["originalInput"] = end["input"], self.entry["input"]
        entry["outcome"] = outcome
        # How many times its body ran for real (a retried call ran more than once).
        entry["runs"] = self.attempts + (1 if ran else 0)
        entry["heldReason"] = self.reason
        entry["answer"] = self.answer
        by = verdict.get("by") if isinstance(verdict.get("by"), str) else None
        if by is None and self.answer:
            by = self.answer.get("by")
        if by is None and outcome == "simulated":
            by = "safe mode"
        entry["by"] = by
        if isinstance(end.get("simulatedFrom"), str):
            entry["simulatedFrom"] = end["simulatedFrom"]
        if end.get("type") == "node.finished" and outcome in ("simulated", "injected", "replayed"):
            entry["output"] = end.get("output")
        if end.get("type") == "node.error":
            entry["error"] = end.get("error")
        return entry

    def _outcome(self) -> tuple[str, bool]:
        """(outcome, whether the last body ran for real)."""
        end, action = self.ended, (self.answer or {}).get("action")
        if end is None:
            if self.held_at is not None:
                return "held", self.held_at != "before"
            return "running", True
        if end.get("replayed") is True:
            return "replayed", False
        if end.get("simulated") is True:
            return "simulated", False
        if action == "inject" and end.get("injected") is True:
            return "injected", False
        if (
            end.get("injected") is True
            and self.answer is None
            and not self.answered_late
            and not self.attempts
        ):
            # Injected with no gate answered: a fork's new output (`graphmind replay --fork`), decided
            # before the body, which never ran.
            return "injected", False
        if action == "abort" or _not_run(end, self.held_before, action):
            return "skipped", False
        return (HELD_THEN_RAN if self.held_before else "ran"), True


def _not_run(end: Mapping[str, Any], held_before: bool, action: Any) -> bool:
    """A node.error that stopped the call before its body: the run was aborted, or its caller gave
    up while the call was held at its before gate."""
    if end.get("type") != "node.error":
        return False
    error = end.get("error")
    name = error.get("name") if isinstance(error, Mapping) else None
    if name == ABORTED_ERROR and action in (None, "abort"):
        return True
    return held_before and action is None and end.get("cancelled") is True


def _answer(ev: Mapping[str, Any]) -> dict[str, Any]:
    """The before gate's answer: its action and who gave it: `answeredBy` (the door the hub names
    in its gate.resolve and the app echoes: viewer, api, mcp; effects/answer.py), else the app's `by`
    (timeout, disconnect, local, ...)."""
    door = ev.get(proto.ANSWERED_BY_FIELD)
    by = ev.get("by")
    who = door if isinstance(door, str) else by if isinstance(by, str) else None
    out: dict[str, Any] = {"action": ev.get("action"), "by": who}
    if isinstance(ev.get("heldMs"), (int, float)):
        out["heldMs"] = ev["heldMs"]
    return out


def fold(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The ledger of a run's events (in stored order)."""
    calls: dict[Any, _Call] = {}
    order: list[_Call] = []
    for ev in events:
        kind = ev.get("type")
        key = (ev.get("nodeId"), ev.get("instanceId"))
        if kind == "node.started":
            effect = effect_of(ev)
            if effect is None or effect[0] not in LISTED or ev.get("kind") == "llm":
                continue
            call = _Call(len(order) + 1, ev, *effect)
            calls[key] = call
            order.append(call)
        elif (call_seen := calls.get(key)) is not None:
            call_seen.see(ev)
    return [c.result() for c in order]


def summary(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts per outcome, and the two the proof is about: writes and unknown calls that ran."""
    counts = {o: 0 for o in OUTCOMES}
    for e in entries:
        counts[e["outcome"]] = counts.get(e["outcome"], 0) + 1
    # A call ran when its body ran at least once (`runs`), or may be running now.
    writes_ran = sum(1 for e in entries if e["class"] == proto.WRITE and e["runs"] > 0)
    unknown_ran = sum(1 for e in entries if e["class"] == proto.UNKNOWN and e["runs"] > 0)
    return {"calls": len(entries), "writesRan": writes_ran, "unknownRan": unknown_ran, "outcomes": counts}


def run_ledger(conn: sqlite3.Connection, run_id: str) -> dict[str, Any] | None:
    """`GET /api/runs/{id}/effects`'s body, or None when there is no such run."""
    if conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
        return None
    entries = fold(_events(conn, run_id))
    ledger: dict[str, Any] = {"runId": run_id, "effects": entries, "summary": summary(entries)}
    # The audit of answers an assistant proposed at this run's gates (store/proposals.py): what
    # was proposed, why, and who accepted or rejected it. Absent when there was none.
    audit = [audit_line(p) for p in run_proposals(conn, run_id)]
    if audit:
        ledger["proposals"] = audit
    return ledger


def ledger_entries(conn: sqlite3.Connection, run_id: str) -> list[dict[str, Any]]:
    """Just the entries (the export's `effects` field; an unknown run has none)."""
    return fold(_events(conn, run_id))


def _events(conn: sqlite3.Connection, run_id: str) -> Iterable[dict[str, Any]]:
    """The run's events of the types the ledger folds, in stored order, read in chunks."""
    marks = ",".join("?" * len(_TYPES))
    after = 0
    while True:
        rows = conn.execute(
            f"SELECT cursor, body FROM events WHERE run_id = ? AND cursor > ? AND type IN ({marks})"
            " ORDER BY cursor LIMIT ?",
            (run_id, after, *_TYPES, _CHUNK),
        ).fetchall()
        for cursor, body in rows:
            after = cursor
            try:
                event = json.loads(body)
            except ValueError:
                continue
            if isinstance(event, dict):
                yield event
        if len(rows) < _CHUNK:
            return
