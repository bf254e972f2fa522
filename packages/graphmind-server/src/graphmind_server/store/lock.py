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

The lock follows the file, not the name it was given: a second hub through a symlink or a hard
link started, and all 2,002 events sent to one of them were lost (SQLite keeps a WAL beside each
name, so two names of one file also corrupt it:
https://sqlite.org/howtocorrupt.html#_multiple_links_to_the_same_file). So the lock file sits
beside the resolved path (every symlink to it finds the same one), and the database file itself is
flocked too: an flock belongs to the inode, whatever name or link opened it. SQLite locks the
database with POSIX `fcntl` locks, which Linux keeps apart from `flock` ones. But closing any
descriptor of a file drops every POSIX lock the process holds on it: this descriptor is closed
only after the store closed its connections (Store.close), and a refused one is never closed
(`_REFUSED`), in case this process has the file open through SQLite already.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

from ..base.files import create_private
from .schema import StoreError

# Descriptors of a database another hub had locked: kept open for good (see above).
_REFUSED: list[int] = []


def lock_path(db: Path) -> Path:
    """`<db>.lock` beside the file the path names in the end (symlinks resolved)."""
    real = Path(os.path.realpath(db))
    return real.with_name(real.name + ".lock")


class DbLock:
    """The lock, taken on construction (StoreError with the one line to print when another hub has it)."""

    def __init__(self, db: Path) -> None:
        self.path = lock_path(db)
        self._db_fd = -1
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
        # It names our pid and port: 0600 like every file of ours, also when an older hub left it looser.
        with contextlib.suppress(OSError):
            if os.fstat(self._fd).st_uid == os.geteuid():
                os.fchmod(self._fd, 0o600)
        try:
            self._lock_file_itself(db)
        except BaseException:
            self.release()
            raise

    def _lock_file_itself(self, db: Path) -> None:
        """flock the database's inode: another name of it (a hard link) meets this lock."""
        try:
            create_private(db)
            fd = os.open(db, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise StoreError(
                f"cannot open the database {db} ({exc.strerror or exc}); "
                "pass --db or set GRAPHMIND_DB to a writable file"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            _REFUSED.append(fd)
            raise StoreError(
                f"{db} is in use by another hub{_owner_by_inode(fd, db)} under another name of the same "
                "file (a hard link, or another path to it); two names of one SQLite file corrupt it: "
                "stop that hub and use one name, or give this one its own database with --db"
            ) from None
        self._db_fd = fd

    def _owner(self) -> str:
        return _describe_owner(self._fd)

    def describe(self, port: int | None) -> None:
        """Write who holds the lock (this process, and its port once bound)."""
        data = json.dumps({"pid": os.getpid(), "port": port}).encode()
        with contextlib.suppress(OSError):  # the lock still holds; only the message would be poorer
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, data, 0)

    def release(self) -> None:
        """After the store closed every connection to the database (the module docstring says why)."""
        if self._db_fd >= 0:
            os.close(self._db_fd)
            self._db_fd = -1
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = -1


def _describe_owner(fd: int) -> str:
    """What a lock file says of its holder: "pid P, port N" (or "starting up")."""
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict):
        info = {}
    pid, port = info.get("pid"), info.get("port")
    if pid is None:
        return "starting up"
    return f"pid {pid}, port {port}" if port is not None else f"pid {pid}, starting up"


def _owner_by_inode(fd: int, db: Path) -> str:
    """ " (pid P, port N, on NAME)" from the lock file of another name of this inode in the same
    directory (where a hard link usually is); "" when there is none to read."""
    try:
        mine = os.fstat(fd)
        own = lock_path(db).name
        with os.scandir(Path(os.path.realpath(db)).parent) as scan:
            entries = [e.path for e in scan if e.name.endswith(".lock") and e.name != own]
    except OSError:
        return ""
    for entry in entries:
        other = Path(entry[: -len(".lock")])
        try:
            st = other.stat()
            if (st.st_dev, st.st_ino) != (mine.st_dev, mine.st_ino):
                continue
            lock_fd = os.open(entry, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            return f" ({_describe_owner(lock_fd)}, on {other})"
        finally:
            os.close(lock_fd)
    return ""
