"""Answers proposed at a held gate (a coding assistant through `graphmind mcp`), and their fate.

A proposal is kept with the run and node it is about: the answer it would send (the body of
`POST /api/gates/{gateId}`), the assistant's reason, and what became of it: `pending`, `accepted`
(by the person in the viewer, or `auto` under `graphmind mcp --allow-control=auto`), `rejected`, or
`lapsed` (the gate was answered otherwise, or its app went away, before anyone decided). The
node detail and the effects ledger read them back as audit lines (docs/api.md, "Proposals").
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from .ops import Op
from .writer import Writer

STATUSES = ("pending", "accepted", "rejected", "lapsed")
_COLUMNS = (
    "id, run_id, node_id, instance_id, gate_id, gate, action, answer, why, status, decided_by, note,"
    " created_at, decided_at"
)


@dataclass
class AddProposal(Op):
    proposal: dict[str, Any]

    def apply(self, writer: Writer) -> None:
        p = self.proposal
        writer.conn.execute(
            f"INSERT INTO proposals ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                p["id"],
                p["runId"],
                p.get("nodeId"),
                p.get("instanceId"),
                p["gateId"],
                p.get("gate"),
                p["action"],
                json.dumps(p["answer"]),
                p["why"],
                p["status"],
                p.get("decidedBy"),
                p.get("note"),
                p["createdAt"],
                p.get("decidedAt"),
            ),
        )


@dataclass
class DecideProposal(Op):
    """Set a pending proposal's fate; returns whether it was still pending (a second click loses)."""

    proposal_id: str
    status: str
    decided_by: str
    at: float
    note: str | None = None

    def apply(self, writer: Writer) -> bool:
        cur = writer.conn.execute(
            "UPDATE proposals SET status = ?, decided_by = ?, decided_at = ?, note = ?"
            " WHERE id = ? AND status = 'pending'",
            (self.status, self.decided_by, self.at, self.note, self.proposal_id),
        )
        return cur.rowcount > 0


@dataclass
class LapseProposals(Op):
    """Their gate was released without them (answered otherwise, its app gone): they lapse."""

    ids: list[str]
    at: float

    def apply(self, writer: Writer) -> None:
        writer.conn.executemany(
            "UPDATE proposals SET status = 'lapsed', decided_at = ? WHERE id = ? AND status = 'pending'",
            [(self.at, i) for i in self.ids],
        )


@dataclass
class LapseLeftPending(Op):
    """A hub starting holds no gate yet: proposals a previous hub left pending lapse."""

    at: float

    def apply(self, writer: Writer) -> None:
        writer.conn.execute(
            "UPDATE proposals SET status = 'lapsed', decided_at = ? WHERE status = 'pending'", (self.at,)
        )


def _row(r: tuple[Any, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": r[0],
        "runId": r[1],
        "nodeId": r[2],
        "instanceId": r[3],
        "gateId": r[4],
        "gate": r[5],
        "action": r[6],
        "answer": json.loads(r[7]),
        "why": r[8],
        "status": r[9],
        "decidedBy": r[10],
        "createdAt": r[12],
        "decidedAt": r[13],
    }
    if r[11]:
        out["note"] = r[11]
    return out


def run_proposals(
    conn: sqlite3.Connection, run_id: str, node_id: str | None = None, limit: int = 200
) -> list[dict[str, Any]]:
    """A run's proposals (one node's with `node_id`), oldest first. A database from before
    proposals existed (read-only, never migrated) has none."""
    where, args = "run_id = ?", [run_id]
    if node_id is not None:
        where += " AND node_id = ?"
        args.append(node_id)
    try:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM proposals WHERE {where} ORDER BY created_at, rowid LIMIT ?",
            (*args, limit),
        ).fetchall()
    except sqlite3.OperationalError:
        return []
    return [_row(r) for r in rows]


def get_proposal(conn: sqlite3.Connection, proposal_id: str) -> dict[str, Any] | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM proposals WHERE id = ?", (proposal_id,)).fetchone()
    return _row(row) if row else None


def query(
    conn: sqlite3.Connection, run_id: str | None, status: str | None, limit: int
) -> list[dict[str, Any]]:
    """`GET /api/proposals`: newest first."""
    where: list[str] = []
    args: list[Any] = []
    if run_id is not None:
        where.append("run_id = ?")
        args.append(run_id)
    if status is not None:
        where.append("status = ?")
        args.append(status)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM proposals {clause} ORDER BY created_at DESC, rowid DESC LIMIT ?",
        (*args, limit),
    ).fetchall()
    return [_row(r) for r in rows]


def audit_line(p: dict[str, Any]) -> dict[str, Any]:
    """One proposal as the effects ledger and the node detail show it."""
    line = {
        "proposal": p["id"],
        "nodeId": p["nodeId"],
        "instanceId": p["instanceId"],
        "gate": p["gate"],
        "action": p["action"],
        "why": p["why"],
        "status": p["status"],
        "by": p["decidedBy"],
        "at": p["decidedAt"] or p["createdAt"],
    }
    return line
