"""The ring: what an app thread does to buffer one event (`enqueue`), and the drop-oldest rule.

Every event goes into the ring as the pipeline made it, `[event, size, runId, seq]` (the event's
JSON text replaces it once sent). `_unsent` counts the newest entries not yet written on the
current connection. Over `buffer_size` entries or about `max_buffer_bytes` of JSON, the oldest
goes: one never sent to any hub is lost and counted by run (detached: a streak, backpressure.py);
one sent but not confirmed stored is kept as its seq (confirm.py). Attached, an entry never sent
stays until the hard bound, and an emitter whose event would push one out waits (backpressure.py).

A full ring drops one entry per event (a detached app's, every call): that one drop is inline in
`enqueue`, with no call and no dict update (issue 37: the detached gated call's budget).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from .confirm import Unconfirmed
from .write_loop import CONTROL_EVENTS


class Ring:
    """The transport's ring and its bounds (the last mixin of `Transport`, which sets its fields:
    the stubs below stand for the other mixins' methods)."""

    _lock: threading.Lock
    _cond: threading.Condition
    _ring: deque[list[Any]]
    _ring_bytes: int
    _unsent: int
    _unsent_bytes: int
    _buffer_size: int
    _max_buffer_bytes: int
    _writer_idle: bool
    _lingering: bool
    _thread: threading.Thread | None
    _confirming: bool
    _unconfirmed: Unconfirmed
    _lost_run: Any
    _lost_run_n: int
    attached: bool

    def start(self) -> None:  # pragma: no cover - Transport's
        raise NotImplementedError

    def _wait_for_room(self, size: int) -> None:  # pragma: no cover - Backpressure's
        raise NotImplementedError

    def _may_drop_unsent(self) -> bool:  # pragma: no cover - Backpressure's
        raise NotImplementedError

    def _count_drop(self, run_id: Any) -> None:  # pragma: no cover - Backpressure's
        raise NotImplementedError

    def _new_lost_run(self, run_id: Any) -> None:  # pragma: no cover - Backpressure's
        raise NotImplementedError

    def enqueue(self, event: dict[str, Any], size: int) -> None:
        """Buffers one event (JSON-safe, owned by the transport from now on: never mutated again).
        `size`: about how many characters its JSON takes, for the byte budget."""
        # The run id rides in the entry: a drop 5,000 events later must not read the (cold) event.
        entry = [event, size, event.get("runId"), event.get("seq")]
        lock = self._lock  # taken by hand: `with` builds two bound methods per call
        lock.acquire()
        try:
            attached = self.attached
            if attached and (
                self._unsent >= self._buffer_size or self._unsent_bytes + size > self._max_buffer_bytes
            ):
                # bounded in time (_wire/backpressure.py); detached: the seed's ring
                self._wait_for_room(size)
                attached = self.attached  # the wait released the lock
            ring = self._ring
            ring.append(entry)
            self._ring_bytes += size
            self._unsent += 1
            self._unsent_bytes += size
            # A full ring drops its oldest entry at each event: that one drop is inline (the rest, a
            # byte budget or a ring an attached hub left over-full: `_trim_ring`). Attached, an
            # oldest entry never sent stays (up to the hard bound, _wire/backpressure.py). The drop
            # is `_trim_ring`'s loop body written out: calling `_trim_ring` costs 4.7k instructions
            # per gated call (96.6k -> 101.3k), a shared `_drop_oldest` method 2.1k; both copies
            # are held to the same model by tests/test_ring_detached.py.
            if (
                len(ring) > self._buffer_size or (self._ring_bytes > self._max_buffer_bytes and len(ring) > 1)
            ) and (not attached or self._unsent < len(ring) or self._may_drop_unsent()):
                dropped = ring.popleft()
                self._ring_bytes -= dropped[1]
                if self._unsent > len(ring):  # it was never written on this connection
                    self._unsent -= 1
                    self._unsent_bytes -= dropped[1]
                    if type(dropped[0]) is not str:  # never sent to any hub: lost, counted by run
                        if attached:
                            self._count_drop(dropped[2])
                        elif dropped[2] is self._lost_run:  # detached, the usual: a streak of one run
                            self._lost_run_n += 1
                        else:
                            self._new_lost_run(dropped[2])
                    elif self._confirming:  # sent to an earlier hub: stored? (_wire/confirm.py)
                        self._unconfirmed.add(dropped[3], dropped[2])
                elif type(dropped[0]) is str and self._confirming:  # sent: stored? (_wire/confirm.py)
                    self._unconfirmed.add(dropped[3], dropped[2])
                if len(ring) > self._buffer_size or (
                    self._ring_bytes > self._max_buffer_bytes and len(ring) > 1
                ):
                    self._trim_ring()
            # notify_all: a flush() or ready() must not take the one wake-up meant for the writer.
            if self._writer_idle:  # else the writer is awake and takes this event with its batch
                self._writer_idle = False
                self._cond.notify_all()
            elif self._lingering and event.get("type") in CONTROL_EVENTS:  # a held gate, an answer: now
                self._lingering = False
                self._cond.notify_all()
        finally:
            lock.release()
        if self._thread is None:
            self.start()

    def _trim_ring(self) -> None:
        """Under the lock: drops the oldest entries while the ring is over its bounds. Attached and
        not stalled, an entry never sent stays (up to the hard bound, _wire/backpressure.py)."""
        ring = self._ring
        while len(ring) > self._buffer_size or (self._ring_bytes > self._max_buffer_bytes and len(ring) > 1):
            if self._unsent >= len(ring) and self.attached and not self._may_drop_unsent():
                break  # attached: the oldest was never sent, so it stays (up to the hard bound)
            dropped = ring.popleft()
            self._ring_bytes -= dropped[1]
            if self._unsent > len(ring):
                self._unsent -= 1
                self._unsent_bytes -= dropped[1]
                if type(dropped[0]) is not str:  # never sent to any hub: lost, and counted per run
                    if self.attached:
                        self._count_drop(dropped[2])
                    elif dropped[2] is self._lost_run:
                        self._lost_run_n += 1
                    else:
                        self._new_lost_run(dropped[2])
            if type(dropped[0]) is str and self._confirming:  # sent: stored? (_wire/confirm.py)
                self._unconfirmed.add(dropped[3], dropped[2])
