"""Read queries. Each takes its own (read-only) connection; none ever writes."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import agents, labels, search, threads
from .derive import run_to_api
from .status import shown

_RUN_API_COLUMNS = (
    "id, app, name, status, started_at, ended_at, node_count, event_count, client_id, meta, dropped, usage,"
    f" held_ms, abandoned_reason, thread, {labels.RUN_LABEL_SQL}"
)


@dataclass(frozen=True)
class RunFilter:
    """GET /api/runs's query (docs/api.md): every field given must hold."""

    q: str | None = None  # full text (store/search.py)
    error: bool = False  # a node raised, or the run ended in error
    held: bool = False  # a gate was held in it
    kind: str | None = None
    tool: str | None = None
    model: str | None = None
    agent: str | None = None  # an agent made a call in it (docs/protocol.md, "Agents")
    since: float | None = None  # startedAt >= (ms)
    until: float | None = None  # startedAt <= (ms)
    thread: str | None = None  # the runs of one thread (store/threads.py)
    tag: str | None = None  # a person's tag on the run or one of its nodes (store/labels.py)


def list_runs(
    conn: sqlite3.Connection,
    limit: int,
    status: str | None,
    app: str | None,
    filters: RunFilter | None = None,
) -> list[dict[str, Any]]:
    where: list[str] = []
    args: list[Any] = []
    if status is not None:
        where.append("status = ?")
        args.append(status)
    if app is not None:
        where.append("app = ?")
        args.append(app)
    f = filters or RunFilter()
    facets = [*(["held"] if f.held else [])]
    facets += [
        f"{name}:{v}"
        for name, v in (("kind", f.kind), ("tool", f.tool), ("model", f.model), ("agent", f.agent))
        if v
    ]
    for facet in facets:
        where.append("id IN (SELECT run_id FROM facets WHERE facet = ?)")
        args.append(facet)
    if f.error:
        where.append("(status = 'error' OR id IN (SELECT run_id FROM facets WHERE facet = 'error'))")
    if f.since is not None:
        where.append("started_at >= ?")
        args.append(f.since)
    if f.until is not None:
        where.append("started_at <= ?")
        args.append(f.until)
    if f.thread is not None:
        where.append("thread = ?")
        args.append(f.thread)
    if f.tag is not None:
        where.append(labels.TAG_FILTER)
        args.append(f.tag)
    if f.q is not None:
        # Every word somewhere in the run (not necessarily in one event).
        words = [w for w in (search.fts_query(w) for w in f.q.split()) if w]
        if not words:
            return []
        # A word in a person's note or tags counts too (store/labels.py).
        for word, fts in zip(f.q.split(), words, strict=True):
            clause_for_word, word_args = search.run_has_word(conn, fts)
            where.append(f"({clause_for_word} OR {labels.TEXT_FILTER})")
            args += [*word_args, labels.like(word)]
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        # Newest first by the hub's clock (store/retention.py): a run dated 2200 by its app's clock
        # does not sit on top for ever, and the list's order is the prune's.
        f"SELECT {_RUN_API_COLUMNS} FROM runs {clause} ORDER BY received_at DESC, rowid DESC LIMIT ?",
        (*args, limit),
    ).fetchall()
    return [run_to_api(r) for r in rows]


def batch_runs(conn: sqlite3.Connection, batch: str) -> list[dict[str, Any]]:
    """The runs of a `graphmind replay --each` batch (their meta's replayBatch), oldest first."""
    rows = conn.execute(
        f"SELECT {_RUN_API_COLUMNS} FROM runs WHERE json_valid(meta) AND json_extract(meta, '$.replayBatch') = ?"
        " ORDER BY received_at, rowid",
        (batch,),
    ).fetchall()
    return [run_to_api(r) for r in rows]


def get_run(conn: sqlite3.Connection, run_id: str) -> dict[str, Any] | None:
    row = conn.execute(f"SELECT {_RUN_API_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
    if row is None:
        return None
    run = run_to_api(row)
    run["nodes"] = [
        {"nodeId": n[0], "kind": n[1], "name": n[2], "executions": n[3], "status": shown(n[4], run["status"])}
        for n in conn.execute(
            "SELECT node_id, kind, name, executions, status FROM nodes WHERE run_id = ? ORDER BY position",
            (run_id,),
        )
    ]
    run["nodeLabels"] = labels.node_labels(conn, run_id)
    team = agents.summary(conn, run_id, run["eventCount"])
    if team is not None:
        run["agents"] = team
    return run


def agent_node(conn: sqlite3.Connection, run_id: str) -> str | None:
    """The node id of a run's agent node (its run.started's), None when it has none."""
    row = conn.execute("SELECT agent_node FROM runs WHERE id = ?", (run_id,)).fetchone()
    return row[0] if row else None


def run_events(conn: sqlite3.Connection, run_id: str, after: int, limit: int) -> tuple[list[str], int | None]:
    """The raw events of a run after a seq, and the `next` seq when more remain."""
    rows = conn.execute(
        "SELECT seq, body FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        (run_id, after, limit + 1),
    ).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    return [r[1] for r in rows], (rows[-1][0] if more and rows else None)


def events_between(conn: sqlite3.Connection, after: int, upto: int, limit: int) -> list[tuple[int, str, str]]:
    return conn.execute(
        "SELECT cursor, run_id, body FROM events WHERE cursor > ? AND cursor <= ? ORDER BY cursor LIMIT ?",
        (after, upto, limit),
    ).fetchall()


def runs_changed_between(conn: sqlite3.Connection, after: int, upto: int) -> list[tuple[int, dict[str, Any]]]:
    rows = conn.execute(
        f"SELECT cursor, {_RUN_API_COLUMNS} FROM runs WHERE cursor > ? AND cursor <= ? ORDER BY cursor",
        (after, upto),
    ).fetchall()
    return [(r[0], run_to_api(r[1:])) for r in rows]


def run_owner(conn: sqlite3.Connection, run_id: str) -> tuple[str, str] | None:
    """(status, clientId) of a run, or None."""
    row = conn.execute("SELECT status, client_id FROM runs WHERE id = ?", (run_id,)).fetchone()
    return (row[0], row[1]) if row else None


def running_clients(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT client_id FROM runs WHERE status = 'running'")]


def setting(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def max_seq(conn: sqlite3.Connection, client_id: str) -> int:
    """The highest seq stored for a client (0 for none)."""
    row = conn.execute("SELECT MAX(seq) FROM events WHERE client_id = ?", (client_id,)).fetchone()
    return int(row[0] or 0)


def newest_run_ids(conn: sqlite3.Connection, last: int | None, app: str | None) -> list[str]:
    """Run ids by start, newest first: every run, or the newest `last`, optionally of one app."""
    where, args = ("WHERE app = ?", [app]) if app is not None else ("", [])
    limit = f"LIMIT {int(last)}" if last is not None else ""
    rows = conn.execute(f"SELECT id FROM runs {where} ORDER BY started_at DESC, id DESC {limit}", args)
    return [r[0] for r in rows.fetchall()]


def run_ids_starting(conn: sqlite3.Connection, prefix: str, limit: int = 2) -> list[str]:
    """Run ids that start with `prefix` (a range over the primary key, not a scan): the viewer's
    short id `#1f3a9c2e` names its run on the command line."""
    rows = conn.execute(
        "SELECT id FROM runs WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
        (prefix, prefix + "\U0010ffff", limit),
    )
    return [r[0] for r in rows.fetchall()]


def event_count(conn: sqlite3.Connection, run_id: str) -> int:
    row = conn.execute("SELECT COUNT(*) FROM events WHERE run_id = ?", (run_id,)).fetchone()
    return int(row[0])


def event_rows(conn: sqlite3.Connection, run_id: str, after: int, limit: int) -> list[tuple[int, str, str]]:
    """(cursor, clientId, body) of a run's events after a cursor, in the order the hub stored them."""
    return conn.execute(
        "SELECT cursor, client_id, body FROM events WHERE run_id = ? AND cursor > ? ORDER BY cursor LIMIT ?",
        (run_id, after, limit),
    ).fetchall()


def started_events(conn: sqlite3.Connection, run_id: str) -> Iterator[str]:
    """The bodies of a run's run.started and node.started events, in the order stored."""
    for (body,) in conn.execute(
        "SELECT body FROM events WHERE run_id = ? AND type IN ('node.started', 'run.started') ORDER BY cursor",
        (run_id,),
    ):
        yield body


def events_by_seq(
    conn: sqlite3.Connection, run_id: str, after: int, types: list[str] | None, limit: int
) -> sqlite3.Cursor:
    """(seq, body) of a run's events after a seq, optionally of some types only; read lazily (close it)."""
    type_clause = f" AND type IN ({','.join('?' * len(types))})" if types else ""
    return conn.execute(
        f"SELECT seq, body FROM events WHERE run_id = ? AND seq > ?{type_clause} ORDER BY seq LIMIT ?",
        (run_id, after, *(types or []), limit),
    )


def events_containing(
    conn: sqlite3.Connection, text: str, run_id: str | None, limit: int
) -> list[tuple[str, int, str]]:
    """(runId, seq, body) of the newest events whose stored JSON contains `text` (any case), optionally
    of one run."""
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    where, args = ("AND run_id = ?", [run_id]) if run_id else ("", [])
    return conn.execute(
        f"SELECT run_id, seq, body FROM events WHERE body LIKE ? ESCAPE '\\' {where} ORDER BY cursor DESC LIMIT ?",
        (pattern, *args, limit),
    ).fetchall()


def held_gates(conn: sqlite3.Connection) -> list[tuple[str, dict[str, Any]]]:
    """The gates held now in running runs, as the store keeps them (each node's held executions),
    each with the exec.paused event that holds it: (runId, event), in the order they were held."""
    found: list[tuple[int, str, dict[str, Any]]] = []
    held_rows = conn.execute(
        "SELECT n.run_id, n.held FROM nodes n JOIN runs r ON r.id = n.run_id"
        " WHERE r.status = 'running' AND n.held != '[]'"
    ).fetchall()
    by_run: dict[str, set[str]] = {}
    for run_id, held in held_rows:
        with contextlib.suppress(ValueError, TypeError):
            by_run.setdefault(run_id, set()).update(h for h in json.loads(held) if isinstance(h, str))
    for run_id, instances in by_run.items():
        latest: dict[str, tuple[int, dict[str, Any]]] = {}
        for cursor, body in conn.execute(
            "SELECT cursor, body FROM events WHERE run_id = ? AND type = 'exec.paused' ORDER BY cursor",
            (run_id,),
        ):
            event = json.loads(body)
            instance = event.get("instanceId")  # one without is kept under "" (store/derive.py)
            if (instance if isinstance(instance, str) else "") in instances:
                latest[instance if isinstance(instance, str) else ""] = (cursor, event)
        found += [(cursor, run_id, event) for cursor, event in latest.values()]
    return [(run_id, event) for _, run_id, event in sorted(found, key=lambda f: f[0])]


def thread_turns(conn: sqlite3.Connection, thread: str, limit: int) -> list[dict[str, Any]]:
    """A thread's runs as turns (store/threads.py), oldest first."""
    return threads.turns(conn, thread, _RUN_API_COLUMNS, run_to_api, limit)
