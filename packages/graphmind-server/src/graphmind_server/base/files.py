"""Private files: every file the hub writes is 0600 in a 0700 directory, whatever the umask.

The database holds every prompt and tool result, the token file the key to the control API: another
user of the machine must be able to open neither (issue 28). A new file is created 0600 (`os.open`
with that mode, then `fchmod`, since the umask can only take bits away); SQLite creates the WAL and
SHM files with the database's own mode (sqlite3.c, `findCreateFileMode`), so a 0600 database gives
0600 companions. An existing file or directory that others can read is tightened when it is ours;
one that is not ours gets one warning line saying how to fix it.

Which directories: the GraphMind home (`~/.graphmind`, or `$GRAPHMIND_HOME`) and any directory the
hub creates are made 0700. A `--db` in a directory the hub did not create (a project folder, /tmp)
keeps that directory's mode: the files in it are 0600, and changing the mode of a directory the
user chose for other reasons would be a surprise (docs/security.md).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from graphmind import protocol as proto

FILE_MODE = 0o600
DIR_MODE = 0o700


def home_dirs(environ: Mapping[str, str] | None = None) -> set[Path]:
    """The GraphMind home directories: always made private."""
    env = os.environ if environ is None else environ
    dirs = {Path("~/.graphmind").expanduser()}
    raw = env.get(proto.HOME_ENV, "").strip()
    if raw:
        dirs.add(Path(raw).expanduser())
    return {d.absolute() for d in dirs}


def warn(message: str) -> None:
    print(f"graphmind: warning: {message}", file=sys.stderr, flush=True)


def tighten(path: Path, mode: int) -> None:
    """Take group/other bits off `path` if it has any: chmod when it is ours, else one warning."""
    try:
        st = path.stat()
    except OSError:
        return
    if not st.st_mode & 0o077:
        return
    why = "it is not owned by this user"
    if st.st_uid == os.geteuid():
        try:
            path.chmod(stat.S_IMODE(st.st_mode) & mode)
            return
        except OSError as exc:
            why = f"chmod failed: {exc.strerror or exc}"
    what = "directory" if stat.S_ISDIR(st.st_mode) else "file"
    warn(
        f"the {what} {path} is readable by other users (mode {stat.S_IMODE(st.st_mode):o}) and the hub cannot "
        f"tighten it ({why}); run `chmod {'700' if what == 'directory' else '600'} {path}` as its owner "
        "(docs/security.md)"
    )


def private_dir(path: Path, environ: Mapping[str, str] | None = None) -> None:
    """Create `path` (and its parents) if needed; a directory created here or a GraphMind home is 0700."""
    path = path.absolute()
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=DIR_MODE)
        directory.chmod(DIR_MODE)  # mkdir's mode passes through the umask
    if path in home_dirs(environ) and path not in missing:
        tighten(path, DIR_MODE)


def create_private(path: Path) -> None:
    """Create `path` empty and 0600 if it does not exist; tighten it (or warn) if it does."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        tighten(path, FILE_MODE)
        return
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (a temporary file renamed over it), 0600."""
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, path)


def open_private(path: Path) -> int:
    """A new 0600 file descriptor for writing `path` (created or truncated)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return fd


def database_files(db: Path) -> list[Path]:
    return [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
