"""Reading a hub's database for an export: read-only, WAL-safe, whether or not a hub is running."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..store import reads
from ..store.schema import SCHEMA_VERSION
from .namespace import exported_client

EVENT_CHUNK = 2000


class ExportError(Exception):
    """An export or import cannot go on; str() is the one line to print."""


def default_db(flag: str | None) -> Path:
    """--db, else GRAPHMIND_DB, else the hub's default file (the same order as `graphmind serve`)."""
    raw = flag if flag else os.environ.get("GRAPHMIND_DB", "").strip()
    return Path(raw or "~/.graphmind/graphmind.db").expanduser()


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection (`mode=ro`): it never writes, creates or migrates the file.

    A reader of a WAL database sees the last committed transaction of a running hub; it never
    blocks the hub's writer and the writer never blocks it.
    """
    if not path.is_file():
        raise ExportError(f"no database at {path}; pass --db or set GRAPHMIND_DB to the hub's file")
    try:
        conn = sqlite3.connect(
            f"file:{quote(str(path.resolve()))}?mode=ro",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute("PRAGMA busy_timeout = 10000")
        row = conn.execute("SELECT version FROM schema_version").fetchone()
    except sqlite3.Error as exc:
        raise ExportError(
            f"cannot read the database {path} ({exc}); pass --db with a GraphMind hub's file"
        ) from None
    version = row[0] if row else 0
    if version != SCHEMA_VERSION:
        conn.close()
        raise ExportError(
            f"{path} has schema version {version}, this graphmind reads version {SCHEMA_VERSION}; "
            "open it once with this version's `graphmind serve`, or upgrade graphmind-server"
        )
    return conn


@dataclass
class StoredEvent:
    client_id: str
    event: dict[str, Any]


def select_runs(
    conn: sqlite3.Connection, ids: list[str], last: int | None, app: str | None
) -> list[dict[str, Any]]:
    """The runs to export (Run objects with their nodes), oldest first.

    Named ids are exported in the order given (an unknown id is an error, nothing is written);
    otherwise every run, or the newest `last`, optionally of one app.
    """
    return [_exported(run) for run in _select_runs(conn, ids, last, app)]


def _exported(run: dict[str, Any]) -> dict[str, Any]:
    if isinstance(run.get("clientId"), str):
        run["clientId"] = exported_client(run["clientId"])
    return run


def _select_runs(
    conn: sqlite3.Connection, ids: list[str], last: int | None, app: str | None
) -> list[dict[str, Any]]:
    if ids:
        runs = []
        for run_id in dict.fromkeys(ids):
            run = reads.get_run(conn, run_id)
            if run is None:
                raise ExportError(
                    f"no run {run_id!r} in the database; `graphmind record --last 10` lists the newest"
                )
            if app is None or run["app"] == app:
                runs.append(run)
        return runs
    where, args = ("WHERE app = ?", [app]) if app is not None else ("", [])
    limit = f"LIMIT {int(last)}" if last is not None else ""
    rows = conn.execute(
        f"SELECT id FROM runs {where} ORDER BY started_at DESC, id DESC {limit}", args
    ).fetchall()
    found = (reads.get_run(conn, r[0]) for r in reversed(rows))
    return [r for r in found if r is not None]


def event_count(conn: sqlite3.Connection, run_id: str) -> int:
    row = conn.execute("SELECT COUNT(*) FROM events WHERE run_id = ?", (run_id,)).fetchone()
    return int(row[0])


def iter_events(conn: sqlite3.Connection, run_id: str) -> Iterator[StoredEvent]:
    """A run's events in the order the hub stored them, read in chunks (a 1M-event run is fine)."""
    after = 0
    while True:
        rows = conn.execute(
            "SELECT cursor, client_id, body FROM events WHERE run_id = ? AND cursor > ? ORDER BY cursor LIMIT ?",
            (run_id, after, EVENT_CHUNK),
        ).fetchall()
        for cursor, client_id, body in rows:
            after = cursor
            try:
                event = json.loads(body)
            except ValueError:  # the hub stores only JSON objects; a hand-edited file gets a marker
                event = {"type": "graphmind.unreadable", "body": body}
            yield StoredEvent(exported_client(client_id), event)
        if len(rows) < EVENT_CHUNK:
            return
