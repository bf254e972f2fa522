"""The exit flush: at interpreter exit, every client still open is disposed (bounded, docs/reliability.md).

A short script never calls `dispose()`; without this its last events and `run.finished` would die
with the process. Each client's dispose waits only while its hub keeps taking events (it gives up
after `FLUSH_IDLE_S` without progress and at `FLUSH_CAP_S` in all), so an unresponsive hub costs
about a second at exit, never a hang. Registered once, on the first transport that starts.

A `multiprocessing` child (start methods fork, forkserver and spawn alike) ends by `os._exit`, past
`atexit` (https://github.com/python/cpython/blob/v3.11.7/Lib/multiprocessing/popen_fork.py#L70-L73,
https://github.com/python/cpython/blob/v3.11.7/Lib/multiprocessing/forkserver.py#L268-L281): what
runs there is multiprocessing's own exit function, which runs its finalizers
(https://github.com/python/cpython/blob/v3.11.7/Lib/multiprocessing/process.py#L314-L317). So the
flush is a finalizer too, in every process that has multiprocessing loaded. A forked child's
finalizers are cleared by `_bootstrap` before its target runs (process.py#L339-L342, `_after_fork`),
after the fork hooks: an after-forker (run after that clear) adds it back. Before, such a child's
events died unsent and uncounted (a fork child stored none of its runs).
"""

from __future__ import annotations

import atexit
import os
import sys
import weakref
from collections.abc import Callable
from typing import Any

from .._base import forksafe

_lock = forksafe.lock()
_callbacks: list[weakref.WeakMethod[Callable[[], None]]] = []
_registered = False
_finalizer_pid = 0  # the process whose multiprocessing finalizers hold run_all
_after_forker_added = False


class _Anchor:
    """What multiprocessing's after-forker registry holds weakly: lives as long as this module."""


_ANCHOR = _Anchor()


def register(dispose: Callable[[], None]) -> None:
    """`dispose` (a bound method) runs at exit if its object is still alive then."""
    global _registered
    with _lock:
        _callbacks.append(weakref.WeakMethod(dispose))
        if not _registered:
            _registered = True
            atexit.register(run_all)
    in_multiprocessing_exit()


def in_multiprocessing_exit(again: bool = False) -> None:
    """Run the flush from multiprocessing's exit function too (once per process; `again`: its
    finalizers were cleared since). Nothing if multiprocessing is not loaded: no child of it runs."""
    global _finalizer_pid, _after_forker_added
    util: Any = sys.modules.get("multiprocessing.util")
    if util is None or (_finalizer_pid == os.getpid() and not again):
        return
    try:
        util.Finalize(None, run_all, exitpriority=100)
        _finalizer_pid = os.getpid()
        if not _after_forker_added:  # inherited by every child forked from now on
            _after_forker_added = True
            util.register_after_fork(_ANCHOR, _after_bootstrap_cleared)
    except Exception:  # never let a client's start fail because of GraphMind
        pass


def _after_bootstrap_cleared(_anchor: _Anchor) -> None:
    """In a multiprocessing child, after `_bootstrap` cleared the finalizers it inherited."""
    in_multiprocessing_exit(again=True)


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
