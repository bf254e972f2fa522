"""The store's door for `graphmind import` (export/import_.py): the file taken for this process
alone, events stored by the hub's own writer in one transaction (the same dedupe on (clientId, seq)
and the same run and node summaries), and a run's exported summary laid over the one its events
derived (the status, times, app, name and meta that events alone cannot say)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import labels
from .items import EventItem
from .schema import StoreError, open_database
from .writer import Writer

# The Run object's fields an export carries that the runs row takes as they are.
_SUMMARY = {
    "app": "app",
    "name": "name",
    "status": "status",
    "started_at": "startedAt",
    "ended_at": "endedAt",
    "client_id": "clientId",
    "thread": "thread",
}


class Import:
    """One import into a database file no other connection has open (StoreError otherwise)."""

    def __init__(self, db: Path) -> None:
        self.conn = _open_exclusive(db)
        try:
            self.writer = Writer(self.conn, lambda committed: None)
        except BaseException:
            self.conn.close()
            raise
        self.writer.nested = True  # each batch a savepoint inside the import's one transaction

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The whole file or nothing."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def write(self, items: list[EventItem]) -> int:
        """Store a batch of events; how many were new."""
        return self.writer.write_now(items)

    def restore_summary(self, run: dict[str, Any]) -> None:
        """The exported summary wins over the one derived from events (status `abandoned`, times)."""
        values = {col: run[key] for col, key in _SUMMARY.items() if key in run}
        if isinstance(run.get("meta"), dict):
            values["meta"] = json.dumps(run["meta"])  # as the hub writes it (store/derive.py)
        if run.get("status") == "abandoned" and isinstance(run.get("abandonedReason"), str):
            values["abandoned_reason"] = run["abandonedReason"]
        dropped = run.get("dropped")
        reasons = dropped.get("reasons") if isinstance(dropped, dict) else None
        if isinstance(reasons, dict):  # what the app could not deliver travels with the run
            kept = {k: v for k, v in reasons.items() if isinstance(k, str) and type(v) is int and v > 0}
            values["dropped"] = json.dumps(kept, sort_keys=True)
        if values:
            exists = self.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run["id"],)).fetchone()
            if exists:
                self.conn.execute(
                    f"UPDATE runs SET {', '.join(f'{c} = ?' for c in values)} WHERE id = ?",
                    (*values.values(), run["id"]),
                )
        self.writer.runs.pop(run["id"], None)  # the row changed under the writer's cache
        self._restore_labels(run)

    def _restore_labels(self, run: dict[str, Any]) -> None:
        """A person's labels travel with the run (store/labels.py); one unreadable is left out."""
        given = [("", run.get("labels"))]
        nodes = run.get("nodeLabels")
        if isinstance(nodes, dict):
            given += [(k, v) for k, v in nodes.items() if isinstance(k, str) and k]
        for node_id, label in given:
            try:
                cleaned = labels.clean(label)
            except labels.LabelError:
                continue
            if cleaned["note"] or cleaned["tags"]:
                labels.put(self.conn, run["id"], node_id, cleaned)


def _open_exclusive(db: Path) -> sqlite3.Connection:
    conn = open_database(db)
    # EXCLUSIVE locking mode keeps the lock for as long as this connection lives, and taking it
    # fails at once while any other connection (a running hub, `graphmind mcp`) has the file open:
    # the hub caches its cursor and runs, so writing under it would corrupt its view.
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("COMMIT")
    except sqlite3.OperationalError:
        conn.close()
        raise StoreError(
            f"{db} is in use (a running hub or `graphmind mcp`); stop it first, "
            "or import into another file with --db"
        ) from None
    return conn
