"""`graphmind effects RUN_ID`: a run's effects ledger as a table (or `--json`, the API's body).

Exit status 0 when no `write` call ran for real, 1 when one did (the proof a fork or a replay is
after: "0 writes ran"), 2 when the run cannot be read. Reads the database read-only, like
`graphmind record` and `graphmind diff`, whether or not a hub is running (docs/effects.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..export.source import ExportError, default_db, full_run_id, open_readonly
from ..store.effects import run_ledger

INPUT_WIDTH = 60
_BY = {"viewer": "the viewer", "api": "an API client", "mcp": "the MCP server"}


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "effects",
        help="a run's effects ledger: every write and unknown tool call and what became of it",
        description="List a run's write and unknown tool calls in order: input, outcome (ran, held then ran, "
        "simulated, injected, replayed, skipped) and whose answer decided it. "
        "Exit status 0 when no write ran, 1 when one did, 2 on an error.",
    )
    p.add_argument(
        "run_id", metavar="RUN_ID", help="the run (its id as the viewer or GET /api/runs shows it)"
    )
    p.add_argument("--db", help="the hub's database (default $GRAPHMIND_DB or ~/.graphmind/graphmind.db)")
    p.add_argument("--json", action="store_true", help="print GET /api/runs/{id}/effects's JSON instead")
    p.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    try:
        conn = open_readonly(default_db(args.db))
    except ExportError as exc:
        print(f"graphmind effects: {exc}", file=sys.stderr)
        return 2
    try:
        ledger = run_ledger(conn, full_run_id(conn, args.run_id))  # the viewer's short id too
    except ExportError as exc:
        print(f"graphmind effects: {exc}", file=sys.stderr)
        return 2
    finally:
        conn.close()
    if ledger is None:
        print(
            f"graphmind effects: no run {args.run_id!r} in the database; `graphmind record --last 10` "
            "lists the newest (or pass --db)",
            file=sys.stderr,
        )
        return 2
    print(json.dumps(ledger) if args.json else table(ledger))
    return 1 if ledger["summary"]["writesRan"] else 0


def by_text(entry: dict[str, Any]) -> str:
    by = entry.get("by")
    return _BY.get(by, by) if isinstance(by, str) else "-"


def outcome_text(entry: dict[str, Any]) -> str:
    outcome = str(entry["outcome"])
    return outcome


def _short(value: Any, width: int = INPUT_WIDTH) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= width else text[: width - 1] + "…"


def table(ledger: dict[str, Any]) -> str:
    entries, s = ledger["effects"], ledger["summary"]
    if not entries:
        return f"run {ledger['runId']}: no write or unknown tool calls; 0 writes ran"
    rows = [("#", "call", "class", "source", "outcome", "by", "input")]
    for e in entries:
        runs = f" ×{e['runs']}" if e.get("runs", 0) > 1 else ""
        rows.append(
            (
                str(e["n"]),
                str(e["name"]),
                str(e["class"]),
                str(e.get("source") or "-"),
                outcome_text(e) + runs,
                by_text(e),
                _short(e.get("input")),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=False)) + "  " + r[-1] for r in rows]
    ran = s["writesRan"]
    verdict = f"{ran} write{'' if ran == 1 else 's'} ran"
    if s["unknownRan"]:
        verdict += f", {s['unknownRan']} unknown call{'' if s['unknownRan'] == 1 else 's'} ran"
    return "\n".join([f"run {ledger['runId']}: {len(entries)} effectful call(s); {verdict}", *lines])
