"""One writer per database: a hub holds an exclusive lock on `<db>.lock` for as long as it runs.

Two hubs on one file both started, and one of them stored nothing (`UNIQUE constraint failed:
events.cursor`: each caches its own cursor) while its app got no signal (issue 29). SQLite's own
locks are held per transaction, so they cannot say "another hub owns this file". `flock` can: the
kernel drops the lock when the process dies (SIGKILL, a crash), so a stale lock file never blocks a
restart, and a second open of the file in the same process conflicts too (flock locks belong to
the open file description, not the process), so two in-process hubs (the demo, tests) are refused
the same way.

The file holds the owner's pid and port as JSON, so the refusal can name them. It is never
removed: unlinking a lock file races with a hub that opened it a moment before (it would lock an
inode nobody else can find).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

from .schema import StoreError


def lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


class DbLock:
    """The lock, taken on construction (StoreError with the one line to print when another hub has it)."""

    def __init__(self, db: Path) -> None:
        self.path = lock_path(db)
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise StoreError(
                f"cannot create the lock file {self.path} ({exc.strerror or exc}); "
                "pass --db or set GRAPHMIND_DB to a file in a writable directory"
            ) from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            owner = self._owner()
            os.close(self._fd)
            raise StoreError(
                f"{db} is in use by another hub ({owner}); stop that hub, "
                "or give this one its own database with --db"
            ) from None

    def _owner(self) -> str:
        try:
            info = json.loads(os.pread(self._fd, 4096, 0) or b"{}")
        except (OSError, ValueError):
            info = {}
        if not isinstance(info, dict):
            info = {}
        pid, port = info.get("pid"), info.get("port")
        if pid is None:
            return "starting up"
        return f"pid {pid}, port {port}" if port is not None else f"pid {pid}, starting up"

    def describe(self, port: int | None) -> None:
        """Write who holds the lock (this process, and its port once bound)."""
        data = json.dumps({"pid": os.getpid(), "port": port}).encode()
        with contextlib.suppress(OSError):  # the lock still holds; only the message would be poorer
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, data, 0)

    def release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = -1
