"""Reading a hub's database for an export: read-only, WAL-safe, whether or not a hub is running."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..store import readonly, reads
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
    """A read-only connection (store/readonly.py): it never writes, creates or migrates the file."""
    if not path.is_file():
        raise ExportError(f"no database at {path}; pass --db or set GRAPHMIND_DB to the hub's file")
    try:
        conn = readonly.connect(path)
        version = readonly.schema_version(conn)
    except sqlite3.Error as exc:
        raise ExportError(
            f"cannot read the database {path} ({exc}); pass --db with a GraphMind hub's file"
        ) from None
    if version != SCHEMA_VERSION:
        conn.close()
        raise ExportError(
            f"{path} has schema version {version}, this graphmind reads version {SCHEMA_VERSION}; "
            "open it once with this version's `graphmind serve`, or upgrade graphmind-server"
        )
    return conn


SHORT_ID = 4  # the fewest characters of a run id taken as its start (the viewer shows 8)


def full_run_id(conn: sqlite3.Connection, given: str) -> str:
    """The run id a command line names: itself when a run has it, else the one run whose id starts
    with it (the viewer's short id, `#1f3a9c2e`, with or without its `#`); otherwise `given`, for
    the caller's own "no run" line. Two runs that start with it are an ExportError."""
    if reads.run_owner(conn, given) is not None:
        return given
    prefix = given.removeprefix("#")
    if len(prefix) < SHORT_ID:
        return given
    found = reads.run_ids_starting(conn, prefix)
    if len(found) > 1:
        raise ExportError(f"{given!r} starts more than one run id ({', '.join(found)}, …): give more of it")
    return found[0] if found else given


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
        for run_id in dict.fromkeys(full_run_id(conn, given) for given in ids):
            run = reads.get_run(conn, run_id)
            if run is None:
                raise ExportError(
                    f"no run {run_id!r} in the database; `graphmind record --last 10` lists the newest"
                )
            if app is None or run["app"] == app:
                runs.append(run)
        return runs
    found = (reads.get_run(conn, run_id) for run_id in reversed(reads.newest_run_ids(conn, last, app)))
    return [r for r in found if r is not None]


def event_count(conn: sqlite3.Connection, run_id: str) -> int:
    return reads.event_count(conn, run_id)


def iter_events(conn: sqlite3.Connection, run_id: str) -> Iterator[StoredEvent]:
    """A run's events in the order the hub stored them, read in chunks (a 1M-event run is fine)."""
    after = 0
    while True:
        rows = reads.event_rows(conn, run_id, after, EVENT_CHUNK)
        for cursor, client_id, body in rows:
            after = cursor
            try:
                event = json.loads(body)
            except ValueError:  # the hub stores only JSON objects; a hand-edited file gets a marker
                event = {"type": "graphmind.unreadable", "body": body}
            yield StoredEvent(exported_client(client_id), event)
        if len(rows) < EVENT_CHUNK:
            return
