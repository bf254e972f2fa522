"""A hub's database read from outside the hub (`graphmind record`, `diff`, `replay`, `mcp`): a
read-only connection and one snapshot per read. It never writes, creates or migrates the file.

A reader of a WAL database sees the last committed transaction of a running hub; it never blocks
the hub's writer and the writer never blocks it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote


def connect(path: Path) -> sqlite3.Connection:
    """A read-only connection (`mode=ro`) to an existing file; raises sqlite3.Error."""
    conn = sqlite3.connect(
        f"file:{quote(str(path.resolve()))}?mode=ro",
        uri=True,
        isolation_level=None,
        check_same_thread=False,
    )
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


def schema_version(conn: sqlite3.Connection) -> int:
    """The file's schema version (0 when it has none); raises sqlite3.Error for a file that is not a
    GraphMind database."""
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return int(row[0]) if row else 0


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One read transaction: every read inside sees the same commit, even while a hub writes."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")
