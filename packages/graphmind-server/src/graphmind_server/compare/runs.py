"""Two runs side by side (`GET /api/compare`, `graphmind diff`): their steps aligned, each pair
equal or changed, with per-step deltas of tokens, cost and latency.

A step is one execution of a node other than the run's agent node, in start order. The alignment
is a longest common subsequence over node ids (difflib, no junk heuristic), so a step inserted in
or removed from one run shifts nothing after it: it shows as added or removed, the rest pair up.
In a team run a step is also its agent's (docs/protocol.md, "Agents"): steps align by (agent, node
id), so a tool two agents call pairs with the same agent's call in the other run.
"""

from __future__ import annotations

import difflib
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from ..effects.diff import compare_effects
from ..effects.diff import text_lines as effect_lines
from ..export.source import iter_events
from ..store import prices, reads
from ..store import status as rule
from ..store.usage import answered_model, started_model
from .jsondiff import canon as _canon
from .jsondiff import report, without

MAX_EVENTS = 500_000  # per run; past this a compare would hold too much in the hub's memory
COMPARED = ("input", "output", "error")


class CompareError(Exception):
    status = 404


def steps(
    conn: sqlite3.Connection, run_id: str, agent_node: str | None, run_status: str = ""
) -> list[dict[str, Any]]:
    """The run's executions other than its agent node's, in start order, each with the status the
    one status rule gives it (store/status.py: what the viewer and the API show)."""
    by_instance: dict[str, dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for stored in iter_events(conn, run_id):
        ev = stored.event
        node_id, etype = ev.get("nodeId"), ev.get("type")
        if not isinstance(node_id, str) or node_id == agent_node:
            continue
        instance = str(ev.get("instanceId", ""))
        if etype == "node.started":
            kind, name = rule.split_node_id(node_id)
            step: dict[str, Any] = {
                "nodeId": node_id,
                "name": ev.get("name") or name,
                "kind": ev.get("kind") or kind,
                "instanceId": instance,
                "input": ev.get("input"),
                "status": rule.execution("running", ev),
                "model": started_model(ev),  # the rule the run's cost is priced by (store/usage.py)
            }
            agent = ev.get("agent")
            if isinstance(agent, str) and agent:
                step["agent"] = agent
            by_instance[instance] = step
            out.append(step)
            continue
        found = by_instance.get(instance)
        if found is None:
            continue
        step = found
        step["status"] = rule.execution(step["status"], ev)
        if etype == "node.finished":
            step["output"] = ev.get("output")
            step["model"] = step["model"] or answered_model(ev)
        elif etype == "node.error":
            step["error"] = ev.get("error")
        if etype in ("node.finished", "node.error"):
            if ev.get("edited") is True and "input" in ev:
                # the input the call actually ran with (docs/protocol.md, "Recording"), not the
                # one it started with: an edit at a gate is a difference between two runs
                step["input"] = ev["input"]
            step["durationMs"] = ev.get("durationMs")
            step["heldMs"] = ev.get("heldMs") or 0
            if etype == "node.finished" and isinstance(ev.get("usage"), dict):
                step["usage"] = ev["usage"]
    for step in out:
        step["status"] = rule.shown(step["status"], run_status)
        step["tokens"], step["costUsd"] = _tokens_and_cost(step)
        ran = step.get("durationMs")
        step["ranMs"] = ran - (step.get("heldMs") or 0) if isinstance(ran, (int, float)) else None
    return out


def _tokens_and_cost(step: dict[str, Any]) -> tuple[int | None, float | None]:
    usage = step.get("usage")
    if not isinstance(usage, dict):
        return None, None
    raw_in, raw_out = usage.get("inputTokens"), usage.get("outputTokens")
    inp = raw_in if type(raw_in) is int else 0
    out = raw_out if type(raw_out) is int else 0
    reported = usage.get("costUsd")
    if isinstance(reported, (int, float)) and not isinstance(reported, bool):
        return inp + out, float(reported)
    p = prices.price(step["model"]) if isinstance(step.get("model"), str) else None
    return inp + out, ((inp * p[0] + out * p[1]) / 1e6 if p else None)


def _delta(a: Any, b: Any) -> Any:
    if type(a) in (int, float) and type(b) in (int, float):
        return round(b - a, 8)
    return None


def _pair(a: dict[str, Any], b: dict[str, Any], ignore: frozenset[str]) -> dict[str, Any]:
    changed = [
        f
        for f in (*COMPARED, "status")
        if _canon(without(a.get(f), ignore)) != _canon(without(b.get(f), ignore))
    ]
    return {
        "status": "changed" if changed else "equal",
        **_agent(b),
        "nodeId": b["nodeId"],
        "name": b["name"],
        "kind": b["kind"],
        "changed": changed,
        "a": a,
        "b": b,
        "deltas": {k: _delta(a.get(k), b.get(k)) for k in ("ranMs", "tokens", "costUsd")},
    }


def _one(step: dict[str, Any], side: str) -> dict[str, Any]:
    return {
        "status": "removed" if side == "a" else "added",
        **_agent(step),
        "nodeId": step["nodeId"],
        "name": step["name"],
        "kind": step["kind"],
        "changed": [],
        side: step,
        "deltas": {},
    }


def _agent(step: dict[str, Any]) -> dict[str, Any]:
    return {"agent": step["agent"]} if "agent" in step else {}


def _key(step: dict[str, Any]) -> str:
    """What aligns: the node id, and in a team run the agent that made the call."""
    agent = step.get("agent")
    return f"{agent}\u0000{step['nodeId']}" if agent else step["nodeId"]


def align(
    sa: list[dict[str, Any]], sb: list[dict[str, Any]], ignore: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    matcher = difflib.SequenceMatcher(None, [_key(s) for s in sa], [_key(s) for s in sb], autojunk=False)
    rows: list[dict[str, Any]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            rows += [_pair(sa[i1 + k], sb[j1 + k], ignore) for k in range(i2 - i1)]
        else:  # delete, insert, replace: a different node at this point is removed + added
            rows += [_one(s, "a") for s in sa[i1:i2]]
            rows += [_one(s, "b") for s in sb[j1:j2]]
    return rows


def _run(conn: sqlite3.Connection, run_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    run = reads.get_run(conn, run_id)
    if run is None:
        raise CompareError(f"no run {run_id!r} (deleted, pruned, or never reported)")
    if run["eventCount"] > MAX_EVENTS:
        err = CompareError(
            f"run {run_id!r} has {run['eventCount']:,} events; compare takes up to {MAX_EVENTS:,}"
        )
        err.status = 422
        raise err
    run.pop("nodes", None)
    return run, steps(conn, run_id, reads.agent_node(conn, run_id), run["status"])


def compare(conn: sqlite3.Connection, a: str, b: str, ignore_keys: Iterable[str] = ()) -> dict[str, Any]:
    """`ignore_keys`: object keys whose values never count, at any depth of an input, output or error
    (volatile ids, timestamps)."""
    ignore = frozenset(ignore_keys)
    run_a, steps_a = _run(conn, a)
    run_b, steps_b = _run(conn, b)
    rows = align(steps_a, steps_b, ignore)
    counts = {k: sum(1 for r in rows if r["status"] == k) for k in ("equal", "changed", "added", "removed")}
    ua, ub = run_a["usage"], run_b["usage"]
    effects = compare_effects(conn, a, b)  # the two ledgers (effects/diff.py)
    return {
        "a": run_a,
        "b": run_b,
        "same": counts["equal"] == len(rows) and run_a["status"] == run_b["status"] and effects["same"],
        "counts": counts,
        "deltas": {
            "tokens": _delta(ua["totalTokens"], ub["totalTokens"]),
            "costUsd": _delta(ua["costUsd"], ub["costUsd"]),
            "durationMs": _delta(_wall(run_a), _wall(run_b)),
        },
        "steps": rows,
        "effects": effects,
        "ignoredKeys": sorted(ignore),
    }


def _wall(run: dict[str, Any]) -> float | None:
    s, e = run.get("startedAt"), run.get("endedAt")
    return e - s if isinstance(s, (int, float)) and isinstance(e, (int, float)) else None


def text_report(result: dict[str, Any]) -> str:
    """`graphmind diff`'s output: one line per step (= equal, ~ changed, + added, - removed), and
    for a changed step where its fields differ: each differing path (`input.messages[39].content`)
    with A's and B's value around the first differing character (compare/jsondiff.py)."""
    ignore = frozenset(result.get("ignoredKeys") or ())
    marks = {"equal": "=", "changed": "~", "added": "+", "removed": "-"}
    a, b = result["a"], result["b"]
    lines = [f"A {a['id']} ({a['name']}, {a['status']})", f"B {b['id']} ({b['name']}, {b['status']})"]
    # A person's notes and tags (store/labels.py): on each run, then on the nodes they label.
    lines += [f"  {side} {text}" for side, run in (("A", a), ("B", b)) for text in label_lines(run)]
    seen: dict[str, int] = {}
    for row in result["steps"]:
        key = f"{row.get('agent', '')}\u0000{row['nodeId']}"
        seen[key] = seen.get(key, 0) + 1
        by = f" ({row['agent']})" if row.get("agent") else ""
        label = f"{row['nodeId']} #{seen[key]}{by}"
        lines.append(
            f"{marks[row['status']]} {label}{'  ' + ', '.join(row['changed']) + ' differ' if row['changed'] else ''}"
        )
        for field in row["changed"]:
            lines += report(field, without(row["a"].get(field), ignore), without(row["b"].get(field), ignore))
    lines += effect_lines(result["effects"]) if "effects" in result else []
    c = result["counts"]
    verdict = "the runs match" if result["same"] else "the runs differ"
    lines.append(
        f"{verdict}: {c['equal']} equal, {c['changed']} changed, {c['added']} added, {c['removed']} removed"
    )
    if ignore:
        lines.append(f"(keys ignored at every depth: {', '.join(sorted(ignore))})")
    return "\n".join(lines)


def label_lines(run: dict[str, Any]) -> list[str]:
    """`labels: tags bug, vip; note "wrong amount"` for the run and each labelled node, if any."""

    def text(label: Any) -> str | None:
        if not isinstance(label, dict):
            return None
        parts = []
        if label.get("tags"):
            parts.append("tags " + ", ".join(str(t) for t in label["tags"]))
        if label.get("note"):
            parts.append("note " + json.dumps(" ".join(str(label["note"]).split())[:120], ensure_ascii=False))
        return "; ".join(parts) or None

    out = []
    own = text(run.get("labels"))
    if own:
        out.append(f"labels: {own}")
    for node_id, label in sorted((run.get("nodeLabels") or {}).items()):
        found = text(label)
        if found:
            out.append(f"labels on {node_id}: {found}")
    return out
