"""When the database cannot store: the writer waits and tries again instead of dropping (issue 29).

A disk that fills up, an I/O error, a read-only remount, or the file deleted or replaced under a
running hub used to cost every event written meanwhile (19,520 of 28,002 on an 8 MB tmpfs) while
the app was told nothing. Now the writer keeps the batch that failed and tries it again with a
backoff (RETRY_MIN_S doubling to RETRY_MAX_S); the queue behind it waits, the ingest loop stops
reading once the queue is long (ingest/lane.py BACKLOG_HIGH), so the apps keep their events in their own
rings and count what those rings must drop. The hub says so: one log line per LOG_INTERVAL_S,
`/api/health` and the viewer show "not storing: <reason>", attached apps get a `hub.storing`
frame (docs/protocol.md). Storing resumes by itself once a write succeeds.

A deleted or replaced file is seen by its identity (st_dev, st_ino) before each transaction:
SQLite would go on writing to the deleted inode, and every event written there is lost at exit.
It resumes if the same file comes back (moved back into place); a new file needs a restart.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .logline import say

RETRY_MIN_S = 0.05
RETRY_MAX_S = 1.0
LOG_INTERVAL_S = 30.0

# SQLite's primary result codes that mean "the storage failed", not "this batch is bad".
_STORAGE_CODES = {
    "SQLITE_FULL": "disk full",
    "SQLITE_IOERR": "disk I/O error",
    "SQLITE_READONLY": "the database became read-only",
    "SQLITE_CANTOPEN": "cannot open the database file",
    "SQLITE_CORRUPT": "the database is damaged",
    "SQLITE_NOTADB": "the database file was overwritten",
    "SQLITE_BUSY": "the database is locked by another process",
    "SQLITE_LOCKED": "the database is locked",
}


class FileGone(Exception):
    """The database file was deleted or replaced since the hub opened it."""


def cannot_store(exc: BaseException) -> str | None:
    """The reason to show when `exc` means the database cannot store, None for a batch's own fault."""
    if isinstance(exc, FileGone):
        return str(exc)
    if not isinstance(exc, sqlite3.Error):
        return None
    name = getattr(exc, "sqlite_errorname", None) or ""
    primary = "_".join(name.split("_")[:2])  # SQLITE_IOERR_WRITE -> SQLITE_IOERR
    what = _STORAGE_CODES.get(primary)
    if what is None:
        text = str(exc).lower()  # Python < 3.11 has no sqlite_errorname
        what = next((w for code, w in _STORAGE_CODES.items() if w in text), None)
        if what is None and "disk" in text:
            what = "disk I/O error"
    return None if what is None else f"{what} ({exc})"


class Stall:
    """The writer's storing state; its methods run on the writer thread only."""

    def __init__(self, path: Path, on_storing: Callable[[str | None], None] | None) -> None:
        self.path = path
        self._identity = _identity(path)
        self._on_storing = on_storing
        self.reason: str | None = None
        self.stopping = False
        self._since = 0.0
        self._delay = RETRY_MIN_S
        self._logged_at = 0.0
        self._retried_at_stop = False
        self._wake = threading.Event()

    def wake(self) -> None:
        """Cut a backoff short (stop())."""
        self._wake.set()

    def check_file(self) -> None:
        if self._identity is None:
            return
        now = _identity(self.path)
        if now != self._identity:
            raise FileGone(
                "the database file was deleted" if now is None else "the database file was replaced"
            )

    def failed(self, reason: str, waiting: int) -> bool:
        """A write failed for `reason`; True after the backoff (try again), False to give up (the
        hub is stopping and has tried once more)."""
        now = time.monotonic()
        if self.reason is None:
            self._since = now
            self._delay = RETRY_MIN_S
        changed = reason != self.reason
        self.reason = reason
        if changed and self._on_storing is not None:
            self._on_storing(reason)
        if changed or now - self._logged_at >= LOG_INTERVAL_S:
            self._logged_at = now
            _log(
                f"not storing: {reason}; {waiting} event(s) of this batch and everything queued "
                f"behind it wait in memory and in the apps, retrying every {RETRY_MAX_S:g} s"
            )
        if self.stopping:
            if self._retried_at_stop:
                _log(
                    f"stopping while not storing ({reason}): {waiting} event(s) of the last batch were not stored"
                )
                return False
            self._retried_at_stop = True
            return True
        self._wake.wait(self._delay)
        self._delay = min(RETRY_MAX_S, self._delay * 2)
        return True

    def stored(self) -> None:
        if self.reason is None:
            return
        _log(f"storing again after {time.monotonic() - self._since:.1f} s not storing ({self.reason})")
        self.reason = None
        self._retried_at_stop = False
        if self._on_storing is not None:
            self._on_storing(None)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _log(message: str) -> None:
    say(f"graphmind: {message}")  # never blocks nor raises: the disk that is full may hold the log
