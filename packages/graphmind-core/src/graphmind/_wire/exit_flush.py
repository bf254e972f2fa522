"""The exit flush: at interpreter exit, every client still open is disposed (bounded, docs/reliability.md).

A short script never calls `dispose()`; without this its last events and `run.finished` would die
with the process. Each client's dispose waits only while its hub keeps taking events (it gives up
after `FLUSH_IDLE_S` without progress and at `FLUSH_CAP_S` in all), so an unresponsive hub costs
about a second at exit, never a hang. Registered once, on the first transport that starts.
"""

from __future__ import annotations

import atexit
import weakref
from collections.abc import Callable

from .._base import forksafe

_lock = forksafe.lock()
_callbacks: list[weakref.WeakMethod[Callable[[], None]]] = []
_registered = False


def register(dispose: Callable[[], None]) -> None:
    """`dispose` (a bound method) runs at exit if its object is still alive then."""
    global _registered
    with _lock:
        _callbacks.append(weakref.WeakMethod(dispose))
        if not _registered:
            _registered = True
            atexit.register(run_all)


def run_all() -> None:
    with _lock:
        pending = list(_callbacks)
        _callbacks.clear()
    for ref in pending:
        dispose = ref()
        if dispose is None:
            continue
        try:
            dispose()
        except BaseException:
            pass
