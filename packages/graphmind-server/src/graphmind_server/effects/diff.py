"""Two runs' effects ledgers compared (`GET /api/compare`'s `effects`, `graphmind diff`): the calls
aligned by node in order, each pair equal or changed in its input, class or outcome, and how many
writes ran on each side (store/effects.py, docs/effects.md)."""

from __future__ import annotations

import difflib
import sqlite3
from typing import Any

from ..compare.jsondiff import canon
from ..store.effects import ledger_entries, summary

COMPARED = ("input", "class", "outcome")


def _row(status: str, a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any]:
    changed = [f for f in COMPARED if a and b and canon(a.get(f)) != canon(b.get(f))]
    either = b or a or {}
    return {
        "status": "changed" if status == "equal" and changed else status,
        "nodeId": either.get("nodeId"),
        "name": either.get("name"),
        "changed": changed,
        "a": a,
        "b": b,
    }


def compare_ledgers(la: list[dict[str, Any]], lb: list[dict[str, Any]]) -> dict[str, Any]:
    matcher = difflib.SequenceMatcher(
        None, [e["nodeId"] for e in la], [e["nodeId"] for e in lb], autojunk=False
    )
    rows: list[dict[str, Any]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            rows += [_row("equal", la[i1 + k], lb[j1 + k]) for k in range(i2 - i1)]
        else:
            rows += [_row("removed", e, None) for e in la[i1:i2]]
            rows += [_row("added", None, e) for e in lb[j1:j2]]
    return {
        "same": all(r["status"] == "equal" for r in rows),
        "a": summary(la),
        "b": summary(lb),
        "calls": rows,
    }


def compare_effects(conn: sqlite3.Connection, a: str, b: str) -> dict[str, Any]:
    return compare_ledgers(ledger_entries(conn, a), ledger_entries(conn, b))


def _writes(s: dict[str, Any]) -> str:
    n = s["writesRan"]
    return f"{n} write{'' if n == 1 else 's'} ran"


def text_lines(effects: dict[str, Any]) -> list[str]:
    """`graphmind diff`'s effects part: nothing when neither run made a write or unknown call."""
    if not effects["calls"]:
        return []
    marks = {"equal": "=", "changed": "~", "added": "+", "removed": "-"}
    lines = [f"effects: A {_writes(effects['a'])}, B {_writes(effects['b'])}"]
    for row in effects["calls"]:
        a, b = row["a"] or {}, row["b"] or {}
        what = ""
        if "outcome" in row["changed"]:
            what = f"  outcome {a.get('outcome')} -> {b.get('outcome')}"
        elif row["status"] != "equal":
            what = f"  {(b or a).get('outcome')}"
        extra = [f for f in row["changed"] if f != "outcome"]
        lines.append(
            f"{marks[row['status']]} {row['name']}{what}{'  ' + ', '.join(extra) + ' differ' if extra else ''}"
        )
    return lines
