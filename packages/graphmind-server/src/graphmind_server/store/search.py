"""Full-text search and run facets, kept in step by the writer (docs/api.md `GET /api/search`).

The index (`search`, SQLite FTS5) holds one row per stored event that describes a node or a run:
its rowid is the event's cursor, its text the scalar values under the event's name, nodeId, app,
input, output, error, meta and value. The text is what the store holds: a value the app redacted
is stored (and so indexed) as the placeholder only. Streamed tokens are not indexed (the text they
build arrives again in the node's output), which keeps the writer's cost per event small.

The hub's writer indexes in its idle time (a burst of events is stored at full speed and indexed
once it is over); a search first asks the writer for the rest (`IndexNow` in ops.py, through the
writer's queue), so it always sees every event stored before it. `graphmind import` indexes in
each batch.

Facets are short strings per run (`kind:tool`, `tool:search`, `model:gpt-4o`, `error`, `held`)
that the run list filters on without reading events.
"""

from __future__ import annotations

import contextlib
import queue
import sqlite3
from typing import Any, Protocol

from .logline import say
from .usage import started_model


class Writer(Protocol):
    """What indexing reads and sets on the store's writer (store/writer.py), named here so this
    module, which the writer imports, does not import it back."""

    conn: sqlite3.Connection
    queue: queue.SimpleQueue[Any]
    last_cursor: int
    indexed: int
    index_failed: bool


INDEXED_TYPES = ("run.started", "node.started", "node.finished", "node.error", "node.attempt")

# One expression for the writer (each batch's new events) and the migration (events stored before).
# json_valid guards the statement: one unreadable body must never fail the writer's batch.
INDEX_SQL = f"""INSERT INTO search (rowid, body, run_id, node_id, instance_id)
SELECT e.cursor,
  (SELECT group_concat(j.value, ' ') FROM json_tree(e.body) j
   WHERE j.atom IS NOT NULL AND j.type != 'null' AND (
     j.fullkey IN ('$.name', '$.nodeId', '$.app') OR j.fullkey GLOB '$.input*' OR j.fullkey GLOB '$.output*'
     OR j.fullkey GLOB '$.error*' OR j.fullkey GLOB '$.meta*' OR j.fullkey GLOB '$.value*')),
  e.run_id, json_extract(e.body, '$.nodeId'), json_extract(e.body, '$.instanceId')
FROM events e
WHERE e.cursor > ? AND e.cursor <= ? AND e.type IN ({", ".join(f"'{t}'" for t in INDEXED_TYPES)})
  AND json_valid(e.body)"""

FACET_SQL = "INSERT OR IGNORE INTO facets (facet, run_id) VALUES (?, ?)"
IDLE_CHUNK = 2000  # events indexed per idle transaction: a new batch never waits long behind one
_INDEXED_KEY = "search_indexed"  # settings: every event up to this cursor is in the index


def indexed_cursor(conn: sqlite3.Connection, last_cursor: int) -> int:
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (_INDEXED_KEY,)).fetchone()
    return int(row[0]) if row else last_cursor  # none yet: the migration indexed everything stored


def set_indexed(conn: sqlite3.Connection, cursor: int) -> None:
    conn.execute(
        "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (_INDEXED_KEY, str(cursor)),
    )


# Facets of runs stored before the index existed (the migration), from what the store already has.
BACKFILL_FACETS = [
    "INSERT OR IGNORE INTO facets (facet, run_id) SELECT 'kind:' || kind, run_id FROM nodes WHERE executions > 0",
    "INSERT OR IGNORE INTO facets (facet, run_id) SELECT 'tool:' || name, run_id FROM nodes"
    " WHERE executions > 0 AND kind = 'tool'",
    "INSERT OR IGNORE INTO facets (facet, run_id) SELECT DISTINCT 'error', run_id FROM events WHERE type = 'node.error'",
    "INSERT OR IGNORE INTO facets (facet, run_id) SELECT DISTINCT 'held', run_id FROM events WHERE type = 'exec.paused'",
    "INSERT OR IGNORE INTO facets (facet, run_id) SELECT DISTINCT 'model:' || json_extract(body, '$.attrs.model'),"
    " run_id FROM events WHERE type = 'node.started' AND json_valid(body)"
    " AND json_type(body, '$.attrs.model') = 'text'",
]


def index_between(conn: sqlite3.Connection, after: int, upto: int) -> None:
    """Index the events stored with cursors in (after, upto]."""
    if upto > after:
        conn.execute(INDEX_SQL, (after, upto))


def catch_up(writer: Writer, limit: int | None = None) -> None:
    """Index the writer's stored events not indexed yet (up to `limit`), in its open transaction."""
    writer.index_failed = False
    upto = writer.last_cursor if limit is None else min(writer.last_cursor, writer.indexed + limit)
    if upto > writer.indexed:
        index_between(writer.conn, writer.indexed, upto)
        set_indexed(writer.conn, upto)
        writer.indexed = upto


def index_idle(writer: Writer) -> bool:
    """One chunk of the index in the writer's idle time (its queue empty), in its own transaction;
    False when there is nothing to do now. A failure leaves the events stored and stops the idle
    indexing (no busy loop); the next search tries again."""
    if writer.index_failed or writer.indexed >= writer.last_cursor or not writer.queue.empty():
        return False
    before = writer.indexed
    try:
        writer.conn.execute("BEGIN IMMEDIATE")
        catch_up(writer, IDLE_CHUNK)
        writer.conn.execute("COMMIT")
    except Exception as exc:
        with contextlib.suppress(sqlite3.Error):
            writer.conn.execute("ROLLBACK")
        writer.indexed = before
        writer.index_failed = True
        say(
            f"graphmind: could not update the search index ({type(exc).__name__}: {exc}); the events are "
            "stored, a search tries again"
        )
        return False
    return True


def forget_run(conn: sqlite3.Connection, run_id: str) -> None:
    """Before a run's events are deleted: its index rows and facets go with them."""
    conn.execute("DELETE FROM search WHERE rowid IN (SELECT cursor FROM events WHERE run_id = ?)", (run_id,))
    conn.execute("DELETE FROM facets WHERE run_id = ?", (run_id,))
    conn.execute("DELETE FROM labels WHERE run_id = ?", (run_id,))  # a person's labels (store/labels.py)


def fts_query(text: str) -> str | None:
    """The user's words as an FTS5 query: every word must appear, each taken literally (quoted), so
    no input is an FTS syntax error. None when there is no word."""
    words = [w for w in text.split() if w.strip()]
    if not words:
        return None
    return " ".join('"' + w.replace('"', '""') + '"' for w in words)


# A word in fewer events than this: the runs list takes the set of runs it is in (one pass over its
# matches). More: the list asks, run by run in its own order, whether the word is in that run's range
# of events, and stops at its limit. Collecting a word in every event of a year of runs took 0.9 s
# per 100k events it is in (bench/year_of_runs.py); the newest 50 runs that hold it take a few ms.
RARE_WORD_EVENTS = 5000


def run_has_word(conn: sqlite3.Connection, fts: str) -> tuple[str, list[Any]]:
    """A WHERE clause on `runs` (and its arguments): the run holds the FTS query `fts` in some event."""
    matches = conn.execute(
        "SELECT COUNT(*) FROM (SELECT 1 FROM search WHERE search MATCH ? LIMIT ?)", (fts, RARE_WORD_EVENTS)
    ).fetchone()[0]
    if matches < RARE_WORD_EVENTS:
        return "id IN (SELECT run_id FROM search WHERE search MATCH ?)", [fts]
    # The run's events are a range of cursors (the index's rowids; `runs.cursor` is its last change):
    # FTS5 seeks within it.
    return (
        "EXISTS (SELECT 1 FROM search WHERE search MATCH ? AND search.rowid BETWEEN"
        " (SELECT MIN(cursor) FROM events WHERE run_id = runs.id) AND runs.cursor AND search.run_id = runs.id)",
        [fts],
    )


# A run's first cursor, per database file. Cursors only grow (the writer keeps the last one given
# in settings, so none is given twice even after a delete): once read, it is at or below every event
# the run has or will have, even a run a prune deleted and an app then sent again. Reading it scans
# the run's entries of events_by_run_seq: 180 ms for a 1,000,000-event run, paid by every search in it.
_FIRST_CURSORS: dict[tuple[str, str], int] = {}
_FIRST_CURSORS_KEPT = 10_000


def first_cursor(conn: sqlite3.Connection, run_id: str) -> int | None:
    """The cursor of the run's first stored event (None: no event)."""
    file = conn.execute("PRAGMA database_list").fetchone()[2]
    key = (file, run_id)
    if file and key in _FIRST_CURSORS:  # "": an in-memory database, its own each time
        return _FIRST_CURSORS[key]
    first = conn.execute("SELECT MIN(cursor) FROM events WHERE run_id = ?", (run_id,)).fetchone()[0]
    if first is not None and file:
        if len(_FIRST_CURSORS) >= _FIRST_CURSORS_KEPT:
            _FIRST_CURSORS.clear()
        _FIRST_CURSORS[key] = int(first)
    return None if first is None else int(first)


def event_facets(event: dict[str, Any], kind: str, name: str) -> list[str]:
    """The facets one node event adds to its run (`kind` and `name`: the node's, as stored)."""
    etype = event.get("type")
    out: list[str] = []
    if etype == "node.started":
        out.append(f"kind:{kind}")
        if kind == "tool":
            out.append(f"tool:{name}")
        model = started_model(event)  # the rule the run's cost is priced by (store/usage.py)
        if model is not None:
            out.append(f"model:{model}")
        agent = event.get("agent")  # docs/protocol.md, "Agents": the runs list's `agent=` filter
        if isinstance(agent, str) and agent:
            out.append(f"agent:{agent}")
    elif etype == "node.error":
        out.append("error")
    elif etype == "exec.paused":
        out.append("held")
    return out


def search(
    conn: sqlite3.Connection,
    query: str,
    run_id: str | None,
    limit: int,
    agent: str | None = None,
    thread: str | None = None,
) -> list[dict[str, Any]]:
    """Hits, oldest first within a run, newest runs first across runs: each the event's run, node,
    instance, seq, type and a snippet of the matched text (matches between « and »). `agent`: only
    the events of executions that agent made (their `node.started` names it)."""
    fts = fts_query(query)
    if fts is None:
        return []
    where = "search MATCH ?"
    args: list[Any] = [fts]
    if run_id is not None:
        # Within the run's range of cursors (the index's rowids), which FTS5 seeks to: a word in every
        # event of a year of runs is not read everywhere to find one run's (bench/year_of_runs.py).
        # The range's end is the run's last change (`runs.cursor`).
        first = first_cursor(conn, run_id)
        if first is None:
            return []
        where += (
            " AND search.rowid BETWEEN ? AND (SELECT cursor FROM runs WHERE id = ?) AND search.run_id = ?"
        )
        args += [first, run_id, run_id]
    if agent is not None:
        where += (
            " AND search.run_id IN (SELECT run_id FROM facets WHERE facet = ?) AND EXISTS (SELECT 1 FROM"
            " events s WHERE s.run_id = search.run_id AND s.type = 'node.started' AND json_valid(s.body)"
            " AND json_extract(s.body, '$.instanceId') = search.instance_id"
            " AND json_extract(s.body, '$.agent') = ?)"
        )
        args += [f"agent:{agent}", agent]
    if thread is not None:  # the runs of one thread (store/threads.py)
        where += " AND search.run_id IN (SELECT id FROM runs WHERE thread = ?)"
        args.append(thread)
    rows = conn.execute(
        f"""SELECT search.run_id, search.node_id, search.instance_id, e.seq, e.type,
                   snippet(search, 0, '«', '»', '…', 12)
            FROM search JOIN events e ON e.cursor = search.rowid
            WHERE {where} ORDER BY search.rowid {"ASC" if run_id is not None else "DESC"} LIMIT ?""",
        (*args, limit),
    ).fetchall()
    return [
        {"runId": r[0], "nodeId": r[1], "instanceId": r[2], "seq": r[3], "type": r[4], "snippet": r[5]}
        for r in rows
    ]
