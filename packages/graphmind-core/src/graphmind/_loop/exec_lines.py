"""Lines of execution: a number per asyncio / trio task, else per thread, never reused.

The loop guard's streak outside any run belongs to the calling line (_loop/guard.py), so unrelated
requests of one process never form a streak. Asked on every watched call outside a run: cached.
"""

from __future__ import annotations

import contextvars
import itertools
import sys
import threading
import weakref
from typing import Any

from .._base import forksafe

_line_numbers = itertools.count(1)
_thread_line = threading.local()
# A task's number lives as long as the task (a dead task's id() can be reused, its number not).
_task_lines: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_task_lines_lock = forksafe.lock()
# The calling task's (weak reference to it, its number), kept in its own context: one ContextVar
# read per call instead of a WeakKeyDictionary lookup (which builds a weak reference per call). A
# task started from this one inherits the entry, but the reference names its parent, so it looks
# itself up in `_task_lines` and gets a number of its own.
_task_line_cache: contextvars.ContextVar[tuple[weakref.ReferenceType[Any], int] | None] = (
    contextvars.ContextVar("graphmind_task_line", default=None)
)


# Before 3.12, `asyncio.current_task()` is a Python function that looks the running loop up again
# and reads asyncio's loop -> task dict; reading that dict directly saves a call per watched call
# (https://github.com/python/cpython/blob/v3.11.7/Lib/asyncio/tasks.py#L36-L40). From 3.12 on
# current_task() is C, and where the task lives changed (3.14 keeps it on the thread state), so
# there current_task() itself is used.
# asyncio itself is looked up in sys.modules, never imported here: no loop runs before it is
# (`import graphmind` does not pay for it, issue 37; _base/aio.py). The table is read when a loop
# is first seen running.
_modules = sys.modules
_CURRENT_TASKS: dict[Any, Any] | None = None
_TABLE_READ = sys.version_info >= (3, 12)  # from 3.12 on there is no table to read


def _asyncio_task(aio: Any, loop: Any) -> Any:
    """The task running on `loop` (asyncio imported, `loop` running in this thread)."""
    global _CURRENT_TASKS, _TABLE_READ
    if not _TABLE_READ:
        table = getattr(aio.tasks, "_current_tasks", None)
        _CURRENT_TASKS = table if type(table) is dict else None
        _TABLE_READ = True
    if _CURRENT_TASKS is not None:
        return _CURRENT_TASKS.get(loop)
    return aio.current_task()


def _current_task() -> Any:
    """The running asyncio task, else the running trio task, else None (plain thread code)."""
    aio = _modules.get("asyncio")
    loop = None if aio is None else aio._get_running_loop()  # asyncio's C-level check; never raises
    if loop is not None:
        return _asyncio_task(aio, loop)
    trio = sys.modules.get("trio")
    if trio is not None:
        try:
            return trio.lowlevel.current_task()
        except RuntimeError:  # trio imported, not running in this thread
            return None
    return None


def line_of_execution() -> int:
    """A number for the calling task (asyncio or trio), else for the calling thread; never reused."""
    # `_current_task` inlined for asyncio (one call less per watched call outside any run).
    aio = _modules.get("asyncio")
    loop = None if aio is None else aio._get_running_loop()
    if loop is not None:
        task = _CURRENT_TASKS.get(loop) if _CURRENT_TASKS is not None else _asyncio_task(aio, loop)
    else:
        task = _current_task() if "trio" in sys.modules else None
    if task is not None:
        cached = _task_line_cache.get()
        if cached is not None and cached[0]() is task:
            return cached[1]
        number = _task_lines.get(task)
        if number is None:
            with _task_lines_lock:
                number = _task_lines.setdefault(task, next(_line_numbers))
        _task_line_cache.set((weakref.ref(task), number))
        return number
    number = getattr(_thread_line, "number", None)
    if number is None:
        number = _thread_line.number = next(_line_numbers)
    return number
