"""The assistant's read tools over one run: `explain_run` and `node_detail` (search.py has
`search_runs` and `diff_runs`). Each is a compact structured answer, not raw events: long values are cut to the
preview bound (`PREVIEW` characters, marked), lists to a page, and the whole answer to the budget.
Plain functions over a read-only connection (no SDK needed)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

from ..export.source import iter_events
from ..store import reads as store_reads
from ..store.effects import run_ledger
from ..store.proposals import audit_line, run_proposals
from .reads import DEFAULT_BUDGET, Links, ToolInputError, _cut_strings, _fit, clean

PREVIEW = 2_000  # characters of one value (an input, an output, a message) an answer shows
MIN_PREVIEW, MAX_PREVIEW = 200, 20_000
PAGE = 20  # items of a list (attempts, ledger entries, search hits) an answer shows

ContextReader = Callable[[sqlite3.Connection, str, str, str], dict[str, Any] | None]


def preview(value: Any, bound: int = PREVIEW) -> Any:
    """The value with every string over the bound cut (`… [N more characters]`)."""
    return _cut_strings(clean(value), bound)


def _no_run(run_id: str) -> ToolInputError:
    return ToolInputError(f"no run {run_id!r} (deleted, pruned, or never reported); list_runs lists them")


class _Exec:
    """One execution of a node, folded from its events."""

    def __init__(self, ev: dict[str, Any]) -> None:
        self.node_id: str = ev["nodeId"]
        self.instance: str = str(ev.get("instanceId", ""))
        self.kind = ev.get("kind")
        self.name = ev.get("name")
        self.input = ev.get("input")
        self.output: Any = None
        self.error: Any = None
        self.status = "running"
        self.paused: dict[str, Any] | None = None
        self.attempts: list[dict[str, Any]] = []
        self.edits: list[dict[str, Any]] = []
        self.flags: dict[str, Any] = {}

    def see(self, ev: dict[str, Any]) -> None:
        kind = ev.get("type")
        if kind == "node.finished":
            self.status, self.output, self.paused = "ok", ev.get("output"), None
            for flag in ("injected", "replayed", "simulated", "edited"):
                if ev.get(flag):
                    self.flags[flag] = True
        elif kind == "node.error":
            self.status, self.error, self.paused = "error", ev.get("error"), None
        elif kind == "exec.paused":
            self.paused = ev
        elif kind == "exec.resumed":
            self.paused = None
            answer: dict[str, Any] = {k: ev[k] for k in ("action", "by", "answeredBy") if k in ev}
            if ev.get("input") is not None or ev.get("edited"):
                answer["input"] = ev.get("input")
                self.edits.append(answer)
        elif kind == "node.attempt":
            self.attempts.append(
                {k: ev.get(k) for k in ("attempt", "input", "error", "output", "durationMs") if k in ev}
            )
        if kind in ("node.finished", "node.error") and "originalInput" in ev:
            # An edited call (docs/protocol.md, "Editing a held call"): the input it ran with.
            self.edits.append({"originalInput": ev["originalInput"], "input": ev.get("input")})
            self.input = ev.get("input")

    @property
    def held(self) -> bool:
        return self.paused is not None


def _fold(conn: sqlite3.Connection, run_id: str) -> tuple[list[_Exec], dict[str, Any] | None]:
    """Every execution of the run in start order, and its run.finished event (None while running)."""
    execs: dict[str, _Exec] = {}
    order: list[_Exec] = []
    finished: dict[str, Any] | None = None
    for stored in iter_events(conn, run_id):
        ev = stored.event
        if ev.get("type") == "run.finished":
            finished = ev
            continue
        if not isinstance(ev.get("nodeId"), str):
            continue
        instance = str(ev.get("instanceId", ""))
        if ev.get("type") == "node.started":
            ex = _Exec(ev)
            execs[instance] = ex
            order.append(ex)
        elif (found := execs.get(instance)) is not None:
            found.see(ev)
    return order, finished


def _error_text(error: Any) -> str | None:
    if isinstance(error, dict):
        name, message = error.get("name") or error.get("type") or "Error", error.get("message") or ""
        return f"{name}: {message}"[:PREVIEW]
    return None if error is None else str(error)[:PREVIEW]


def explain_run(
    conn: sqlite3.Connection,
    links: Links,
    run_id: str,
    live_gates: list[dict[str, Any]] | None,
    context: ContextReader,
) -> str:
    run = store_reads.get_run(conn, run_id)
    if run is None:
        raise _no_run(run_id)
    execs, finished = _fold(conn, run_id)
    agent = store_reads.agent_node(conn, run_id)
    calls = [e for e in execs if e.node_id != agent]
    held = [e for e in calls if e.held]
    failed = [e for e in calls if e.status == "error"]
    focus_exec = held[0] if held else failed[-1] if failed else None
    answer: dict[str, Any] = {
        "runId": run_id,
        "name": run["name"],
        "app": run["app"],
        "status": run["status"],
        "link": links.run(run_id),
        "steps": len(calls),
        "errors": len(failed),
    }
    live = [g for g in live_gates or () if g.get("runId") == run_id]
    if live and not any(e.instance == live[0].get("instanceId") for e in held):
        # The hub holds it already and its exec.paused is not stored yet (the store commits in
        # batches): the hub's own view of the gate is the focus.
        answer["focus"] = _focus_of_gate(live[0], links, run_id)
    elif focus_exec is not None:
        answer["focus"] = _focus(focus_exec, links, run_id, live_gates)
    elif isinstance(finished, dict) and finished.get("error"):
        answer["focus"] = {
            "node": None,
            "why": "the run ended in error",
            "error": _error_text(finished["error"]),
        }
    else:
        answer["focus"] = None
    loop = next((e.paused.get("loop") for e in held if e.paused and e.paused.get("reason") == "loop"), None)
    answer["loopStreak"] = loop
    answer["divergence"] = _divergence(calls, finished)
    model = [e for e in calls if e.kind == "llm"]
    if model:
        last = model[-1]
        answer["lastModelInput"] = {
            "nodeId": last.node_id,
            "instanceId": last.instance,
            "context": _context_summary(context(conn, run_id, last.node_id, last.instance)),
        }
    else:
        answer["lastModelInput"] = None
    ledger = run_ledger(conn, run_id) or {"effects": [], "summary": {}}
    answer["effects"] = {
        "summary": ledger["summary"],
        "calls": [
            {k: e.get(k) for k in ("name", "nodeId", "class", "outcome", "by", "runs") if k in e}
            for e in ledger["effects"][:PAGE]
        ],
        **({"more": len(ledger["effects"]) - PAGE} if len(ledger["effects"]) > PAGE else {}),
        **({"proposals": ledger["proposals"][-PAGE:]} if ledger.get("proposals") else {}),
    }
    return _fit(clean(answer), "steps", DEFAULT_BUDGET)


def _focus(ex: _Exec, links: Links, run_id: str, live_gates: list[dict[str, Any]] | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "nodeId": ex.node_id,
        "instanceId": ex.instance,
        "kind": ex.kind,
        "name": ex.name,
        "status": "held" if ex.held else ex.status,
        "link": links.node(run_id, ex.node_id),
    }
    if ex.paused is not None:
        p = ex.paused
        out["gate"], out["reason"] = p.get("gate"), p.get("reason")
        out["actions"] = p.get("actions")
        error = p.get("error") or ex.error
        if error is not None:
            out["error"] = _error_text(error)
        gate = next((g for g in live_gates or () if g.get("instanceId") == ex.instance), None)
        out["gateId"] = gate.get("gateId") if gate else None
        if gate is None:
            out["note"] = "no hub answered with this gate's id: start the hub to answer or propose"
    else:
        out["error"] = _error_text(ex.error)
    out["input"] = preview(ex.input, PREVIEW // 2)
    if ex.attempts:
        out["attempts"] = len(ex.attempts) + 1
    return out


def _focus_of_gate(gate: dict[str, Any], links: Links, run_id: str) -> dict[str, Any]:
    node_id = str(gate.get("nodeId"))
    out = {
        k: gate.get(k)
        for k in ("nodeId", "instanceId", "kind", "name", "gate", "reason", "actions", "gateId")
    }
    out["status"], out["link"] = "held", links.node(run_id, node_id)
    if gate.get("error") is not None:
        out["error"] = _error_text(gate["error"])
    out["input"] = preview(gate.get("input"), PREVIEW // 2)
    return out


def _divergence(calls: list[_Exec], finished: dict[str, Any] | None) -> dict[str, Any] | None:
    for ex in calls:
        p = ex.paused
        if p is not None and p.get("reason") == "divergence":
            raw = p.get("replay")
            replay: dict[str, Any] = raw if isinstance(raw, dict) else {}
            return {"nodeId": ex.node_id, "why": replay.get("why"), "occurrence": replay.get("occurrence")}
        err = ex.error if isinstance(ex.error, dict) else None
        if err is not None and "Divergence" in str(err.get("name", "")):
            return {"nodeId": ex.node_id, "why": str(err.get("message", ""))[:PREVIEW]}
    return None


def _context_summary(x: dict[str, Any] | None) -> dict[str, Any] | None:
    """Context X-ray's breakdown, reduced: the total, the tokenizer, the three largest parts."""
    if not x:
        return None
    parts = sorted(x.get("parts") or (), key=lambda p: -(p.get("tokens") or 0))
    return {
        "total": x.get("total"),
        "tokenizer": x.get("tokenizer"),
        "estimated": x.get("estimated"),
        "contextLimit": x.get("contextLimit"),
        "largest": [
            {k: p.get(k) for k in ("id", "kind", "role", "label", "tokens", "share")}
            | {"preview": str(p.get("preview") or "")[:160]}
            for p in parts[:3]
        ],
        "warnings": list(x.get("warnings") or ())[:5],
    }


def node_detail(
    conn: sqlite3.Connection,
    links: Links,
    run_id: str,
    node_id: str,
    instance: str | None,
    bound: int,
) -> str:
    if not MIN_PREVIEW <= bound <= MAX_PREVIEW:
        raise ToolInputError(f"preview must be from {MIN_PREVIEW} to {MAX_PREVIEW} characters (got {bound})")
    if store_reads.run_owner(conn, run_id) is None:
        raise _no_run(run_id)
    execs, _ = _fold(conn, run_id)
    mine = [e for e in execs if e.node_id == node_id]
    if not mine:
        names = sorted({e.node_id for e in execs})[:PAGE]
        raise ToolInputError(f"run {run_id!r} has no node {node_id!r}; its nodes: {', '.join(names)}")
    if instance is not None:
        picked = [e for e in mine if e.instance == instance]
        if not picked:
            raise ToolInputError(
                f"node {node_id!r} has no execution {instance!r}; it has {', '.join(e.instance for e in mine[:PAGE])}"
            )
        ex = picked[0]
    else:
        ex = mine[-1]
    out: dict[str, Any] = {
        "runId": run_id,
        "nodeId": node_id,
        "instanceId": ex.instance,
        "execution": mine.index(ex) + 1,
        "executions": len(mine),
        "kind": ex.kind,
        "name": ex.name,
        "status": "held" if ex.held else ex.status,
        "link": links.node(run_id, node_id),
        "input": preview(ex.input, bound),
        "output": preview(ex.output, bound),
        "error": _error_text(ex.error),
        "attempts": [preview(a, bound // 4) for a in ex.attempts[-PAGE:]],
        "edits": [preview(e, bound // 4) for e in ex.edits[-PAGE:]],
        **ex.flags,
    }
    if ex.paused is not None:
        out["held"] = {k: ex.paused.get(k) for k in ("gate", "reason", "actions", "gateId") if k in ex.paused}
    out["proposals"] = [
        {**audit_line(p), "answer": preview(p["answer"], bound // 4)}
        for p in run_proposals(conn, run_id, node_id)
        if p["instanceId"] in (None, ex.instance)
    ][-PAGE:]
    return _fit(clean(out), "attempts", max(DEFAULT_BUDGET, bound * 6))


def fallback_context(
    conn: sqlite3.Connection, run_id: str, node_id: str, instance: str
) -> dict[str, Any] | None:
    """Until Context X-ray answers: the model input's messages as parts, counted at 4 characters a
    token (estimated)."""
    for stored in iter_events(conn, run_id):
        ev = stored.event
        if ev.get("type") == "node.started" and str(ev.get("instanceId", "")) == instance:
            inp = ev.get("input")
            messages = (
                inp.get("messages") if isinstance(inp, dict) else inp if isinstance(inp, list) else None
            )
            if not isinstance(messages, list):
                return None
            parts: list[dict[str, Any]] = []
            for i, m in enumerate(messages):
                text = json.dumps(m, ensure_ascii=False) if not isinstance(m, str) else m
                role = m.get("role") if isinstance(m, dict) else None
                parts.append(
                    {
                        "id": f"m{i}",
                        "kind": "message",
                        "role": role,
                        "label": f"{role or 'message'} #{i + 1}",
                        "tokens": max(1, len(text) // 4),
                        "preview": text[:160],
                    }
                )
            total = sum(p["tokens"] for p in parts) or 1
            for p in parts:
                p["share"] = round(p["tokens"] / total, 3)
            return {
                "tokenizer": "chars/4",
                "estimated": True,
                "total": total,
                "contextLimit": None,
                "parts": parts,
                "warnings": [],
            }
    return None
