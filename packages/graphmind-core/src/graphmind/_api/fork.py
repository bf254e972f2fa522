"""Fork safety: a forked child gets its own clientId, connection and ring (issue 29).

A child of an attached app (gunicorn, uWSGI and celery prefork workers, `multiprocessing`'s fork
start method, a bare `os.fork()`) inherited its parent's client as is: the same clientId and seqs
(so the hub took the child's events for duplicates and dropped them), the parent's socket (the
child's exit closed the parent's connection, which released the parent's held gate with nobody
answering), and a transport thread that does not exist in the child (so a gated call blocked
forever). `os.register_at_fork(after_in_child=...)` rebuilds each live client's connection state
in the child before any of the child's code runs; the parent's objects (its socket included) are
dropped without a goodbye, so nothing the child does reaches the parent's connection.

A child that ends through `multiprocessing` leaves by `os._exit`, past `atexit`: the exit flush is
also a multiprocessing finalizer there (_wire/exit_flush.py), so its last events still reach the hub.
"""

from __future__ import annotations

import os
import weakref
from typing import Any, Protocol

from .._base import forksafe


class _Forkable(Protocol):
    def _after_fork(self) -> None: ...


_clients: weakref.WeakSet[Any] = weakref.WeakSet()
_registered = False
_lock = forksafe.lock()


def track(client: _Forkable) -> None:
    """Rebuild `client`'s connection state in every child forked from now on."""
    global _registered
    with _lock:
        _clients.add(client)
        if not _registered and hasattr(os, "register_at_fork"):
            _registered = True
            os.register_at_fork(after_in_child=_after_in_child)


def _after_in_child() -> None:
    # Every lock of core (this module's too) is unlocked already: _base/forksafe.py's hook runs first.
    from .._wire import exit_flush as _exit_flush

    for client in list(_clients):
        try:
            client._after_fork()
        except Exception:  # never let the child's start fail because of GraphMind
            pass
    # A multiprocessing child exits by os._exit: atexit never runs (exit_flush.py).
    _exit_flush.in_multiprocessing_exit(again=True)
