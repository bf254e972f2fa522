"""The database's WAL file deleted (or replaced) under a running hub.

SQLite keeps writing to the WAL file it has open, deleted or not, while every read connection
opened since makes a new, empty one and fails on the frames the shared index promises
("disk I/O error"): reads answered 503 until a restart, and health said ok meanwhile. The file's
identity is watched: health and a failed read ask the writer to look, and the writer recovers
before its next transaction. It checkpoints what the lost file holds into the database (its open
descriptor still reads it), so nothing committed is lost, then opens its connection again on a
fresh WAL, and the read connections are opened again too (`Store.generation`).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

from .schema import connect

LOST = "the database's WAL file was deleted or replaced; recovering"


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class WalWatch:
    """The identity of the WAL file the writer's connection uses."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.path = db.with_name(db.name + "-wal")
        self.identity = _identity(self.path)

    def lost(self) -> bool:
        """Whether the WAL file the writer opened is no longer at its path (a stat: any thread)."""
        return self.identity is not None and _identity(self.path) != self.identity

    def recover(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        """The writer's connection, on a fresh WAL once the lost one's pages are in the database.
        Raises sqlite3.Error when it cannot yet (a reader mid-query keeps the checkpoint busy)."""
        busy, frames, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise sqlite3.OperationalError(f"disk I/O error (WAL lost; checkpoint busy, {done} of {frames})")
        conn.close()
        fresh = connect(self.db)
        fresh.execute("BEGIN IMMEDIATE")  # makes the new WAL file now
        fresh.execute("COMMIT")
        self.identity = _identity(self.path)
        print(
            f"graphmind: the database's WAL file ({self.path}) was deleted or replaced under the hub: "
            f"its {frames} committed page(s) were copied into {self.db.name} and a new WAL started; "
            "nothing committed was lost",
            file=sys.stderr,
            flush=True,
        )
        return fresh
