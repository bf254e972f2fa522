"""Locks a forked child gets back unlocked: every lock core holds is made here.

`os.fork()` copies a process with only the thread that called it. A lock another thread held at that
moment stays held in the child forever, and the child's first call that takes it hangs (a gated call
while other threads made theirs: the loop guard's lock, the warner's, a run's). Each lock, condition
and event made here is remembered (weakly) and re-initialised in the child before any of the
child's own code runs, the way CPython's `threading` and `logging` do for theirs
(https://github.com/python/cpython/blob/v3.11.7/Lib/threading.py#L1556-L1599,
https://github.com/python/cpython/blob/v3.11.7/Lib/logging/__init__.py#L245-L252). What a lock
guarded is kept as the fork found it: each structure here stays consistent between two bytecodes
(the GIL), which is what the stdlib relies on too.

`_at_fork_reinit` is private to CPython (3.9+, on `_thread.lock`, `_thread.RLock`, `Condition` and
`Event`); tests/test_forksafe.py fails loudly if it ever goes. Acquiring costs nothing extra: the
objects are the stdlib's own, only their creation registers them.

A test (tests/test_forksafe.py) keeps every `threading.Lock()`, `RLock()`, `Condition()` and `Event()`
of core in this module.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any, TypeVar

T = TypeVar("T")

# Weak: a lock dies with its owner. A WeakSet adds a weak reference per object, nothing per acquire.
_live: weakref.WeakSet[Any] = weakref.WeakSet()


def _remember(obj: T) -> T:
    _live.add(obj)
    return obj


def lock() -> threading.Lock:
    """A `threading.Lock()`, unlocked again in a forked child."""
    return _remember(threading.Lock())


def rlock() -> threading.RLock:
    """A `threading.RLock()`, released again in a forked child."""
    return _remember(threading.RLock())


def condition(on: threading.Lock | None = None) -> threading.Condition:
    """A `threading.Condition` (on `on`, else its own lock), with no waiter and unlocked in a forked child."""
    return _remember(threading.Condition(on))


def event() -> threading.Event:
    """A `threading.Event()`, whose internal lock is unlocked in a forked child (its flag is kept)."""
    return _remember(threading.Event())


def after_in_child() -> None:
    """Re-initialise every lock made here (registered first, so before any other core fork hook)."""
    for obj in list(_live):
        try:
            obj._at_fork_reinit()
        except Exception:  # never let the child's start fail because of GraphMind
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=after_in_child)
