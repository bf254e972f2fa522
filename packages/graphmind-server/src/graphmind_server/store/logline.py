"""The hub's own log lines from its writer thread: written by one thread of their own, so writing
one never blocks or breaks storing.

With the hub's stderr on the disk that filled up (`graphmind serve 2>> hub.log`), the writer's
"not storing: disk full" line raised ENOSPC inside the writer's retry loop and ended the thread:
the hub never stored again after space came back, and a read waiting for a commit hung. A stderr
that is a pipe nobody reads would block the writer the same way. Now `say()` only queues the line
(never raises, never waits); the "graphmind-log" thread writes it. A line the stream refuses (a full
disk) is kept and written again every RETRY_S, so the outage's lines appear once the disk takes
them; past MAX_PENDING lines waiting, the oldest go and one line counts them.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import deque

MAX_PENDING = 1000
RETRY_S = 1.0

_cond = threading.Condition()
_pending: deque[str] = deque()
_lost = 0
_writing = False  # the thread holds a line it has not finished writing
_thread: threading.Thread | None = None


def say(line: str) -> None:
    """Queue one line for stderr. Never raises, never blocks on the stream."""
    global _lost, _thread
    try:
        with _cond:
            if len(_pending) >= MAX_PENDING:
                _pending.popleft()
                _lost += 1
            _pending.append(line if line.endswith("\n") else line + "\n")
            if _thread is None or not _thread.is_alive():
                _thread = threading.Thread(target=_run, name="graphmind-log", daemon=True)
                _thread.start()
            _cond.notify_all()
    except Exception:  # a thread that cannot start (the interpreter is exiting): the line goes
        pass


def flush(timeout: float) -> bool:
    """Wait up to `timeout` s for every queued line to be written (the hub's exit); True if done."""
    with _cond:
        return _cond.wait_for(lambda: not _pending and not _writing, timeout)


def _take() -> str:
    """The next line to write (a count of lost lines first); the lock held."""
    global _lost
    if _lost:
        lost, _lost = _lost, 0
        return f"graphmind: {lost} log line(s) were dropped while stderr could not be written\n"
    return _pending.popleft()


def _run() -> None:
    global _writing
    while True:
        with _cond:
            _cond.wait_for(lambda: bool(_pending) or bool(_lost))
            data = _take().encode("utf-8", "replace")
            _writing = True
        while data:
            try:
                data = data[_write(data) :]
            except Exception:  # ENOSPC, EIO, a closed stream: keep what is left, try again later
                with _cond:
                    _cond.wait(RETRY_S)
        with _cond:
            _writing = False
            _cond.notify_all()


def _write(data: bytes) -> int:
    """Write what the stream takes of `data` now; how many bytes it took (raises what it raised)."""
    stream = sys.stderr
    if stream is None:
        return len(data)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream with no descriptor (a test's capture)
        stream.write(data.decode("utf-8", "replace"))
        stream.flush()
        return len(data)
    return os.write(fd, data)
