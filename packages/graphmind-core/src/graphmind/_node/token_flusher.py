"""Streamed tokens: a batch that no later delta sends is sent by the flusher within the interval.

Owned by the client; one daemon thread per client, started on the first waiting batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from .._base import forksafe
from .._base.warn import Warner


class Flushable(Protocol):
    """A node with a token batch waiting."""

    @property
    def instance_id(self) -> str: ...
    def flush_tokens(self) -> None: ...


class TokenFlusher:
    def __init__(self, interval_ms: float, warn: Warner, stopped: Callable[[], bool]) -> None:
        self._interval = interval_ms / 1000.0
        self._warn = warn
        self._stopped = stopped
        self._lock = forksafe.lock()
        self._pending: dict[str, Flushable] = {}
        self._wakeup = forksafe.event()
        self._thread: threading.Thread | None = None
        # True while the thread waits for work (or is not started). Only then does a schedule wake
        # it: a batch scheduled while it is awake joins the window it is in, so a run of short
        # streams costs one wake-up (a GIL hand-off) per interval, not one per stream.
        self._idle = True

    def after_fork(self) -> None:
        """In a forked child: the parent's thread does not exist here; start afresh."""
        self._lock = forksafe.lock()
        self._pending = {}
        self._wakeup = forksafe.event()
        self._thread = None
        self._idle = True

    def schedule(self, node: Flushable) -> None:
        """A node has a token batch waiting: send it within the flush interval even if no delta follows."""
        with self._lock:
            self._pending[node.instance_id] = node
            if self._thread is None:
                self._thread = threading.Thread(target=self._main, name="graphmind-tokens", daemon=True)
                self._thread.start()
            wake, self._idle = self._idle, False
        if wake:
            self._wakeup.set()

    def _main(self) -> None:
        while not self._stopped():
            if not self._wakeup.wait(1.0):
                continue
            self._wakeup.clear()
            if self._interval > 0:
                # The batching window: deltas arriving meanwhile join the same frame. Nothing sets
                # the event while the thread is awake, so this waits the whole interval.
                self._wakeup.wait(self._interval)
            with self._lock:
                pending = list(self._pending.values())
                self._pending.clear()
                self._idle = True  # from here on, a schedule wakes the thread again
            for node in pending:
                try:
                    node.flush_tokens()
                except Exception as exc:  # pragma: no cover - defensive: the flusher must not die
                    self._warn(f"[graphmind] could not send streamed tokens: {exc!r}", key="token-flush")
