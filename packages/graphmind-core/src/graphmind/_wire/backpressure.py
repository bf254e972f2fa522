"""Attached means complete: an emitter waits for room instead of dropping while the hub takes events.

Split from `_transport.py` (the ring, its state, the connection); `Transport` inherits this. Issue 38.

- **Detached** (no hub, or reconnecting): the seed's ring. The newest `buffer_size` events (and
  about `max_buffer_bytes` of JSON) are kept for the next attach; an older event that was never
  sent falls out, counted (reason `detached`).
- **Attached and the hub making progress**: when the unsent part of the ring is at the ring's
  bound, the emitting thread waits (on the transport's condition, GIL released) until the write
  loop takes a batch. Progress is a batch written to the connection: the hub reads as fast as it
  stores, and a hub that stops reading stops the app's writes through TCP flow control, so this
  needs nothing from the hub (docs/protocol.md, "Flow control").
- **Attached and the hub stalled**: a wait that sees no batch written for `STALL_S` marks the
  connection stalled; from then on no emitter waits, and the ring's drop-oldest rule applies,
  counted (reason `hub_stalled`). The first batch written again ends the episode with one warning
  naming how many events it cost (so does losing the connection, or `close()`).
- **On an event loop's thread** (an emit from a coroutine): the waits of one loop tick add up to
  at most `LOOP_TICK_WAIT_S`, so the loop is slowed, never frozen; what the tick emits after that
  is kept above the ring's bound, up to `OVERFLOW` times it, and only past that hard bound does
  drop-oldest apply (reason `overflow`). The transport's own threads (the reader emits
  `exec.resumed`) never wait; they use the same allowance.

Memory is bounded in every case: at most `OVERFLOW × buffer_size` events and `OVERFLOW ×
max_buffer_bytes` of JSON (plus one event), the allowance only ever used while attached.

Every event lost this way is counted per run and reason (`dropped_by_run`) and, to a hub that
advertises the `dropped` capability, sent as a `dropped` control frame with the totals so far
(docs/protocol.md): the run then says "N events were not recorded: why".
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from .._base.aio import running_loop
from .._base.warn import Warner
from .._config.options import Options

if TYPE_CHECKING:  # annotations only: asyncio is not imported for a sync app (_base/aio.py)
    import asyncio

STALL_S = 2.0  # attached: no batch written for this long while an emitter waits -> counted drops
LOOP_TICK_WAIT_S = 0.05  # an event loop's thread waits at most this long per loop tick
OVERFLOW = 2  # the hard bound, as a multiple of the ring's bound (used while attached only)
MAX_RUNS_COUNTED = 1000  # per-run loss totals kept for the hub (the newest runs)

DETACHED = "detached"  # the ring wrapped while no hub took events
HUB_STALLED = "hub_stalled"  # attached, the hub took no events for STALL_S
OVERFLOW_REASON = "overflow"  # attached, past the hard bound (an event loop's emits)


class Backpressure:
    # Set by Transport.__init__ / _connect / _detach (see there).
    _cond: threading.Condition
    _ring: deque[list[Any]]
    _unsent: int
    _unsent_bytes: int
    _ring_bytes: int
    _buffer_size: int
    _max_buffer_bytes: int
    _stopping: bool
    _options: Options
    _warn: Warner
    attached: bool
    counters: dict[str, int]
    _writer_idle: bool

    def _init_backpressure(self) -> None:
        self._stalled = False  # attached, and the hub took nothing for STALL_S: drop-oldest applies
        self._stall_drops = 0  # events lost in the current stall episode
        self._progress_at = time.monotonic()  # the last batch written (or the attach)
        self._waiting_since: float | None = None  # the first wait for room since then
        self._room_waiters = 0  # emitters waiting for room: the write loop wakes them on a take
        self._own_threads: set[int] = set()  # the transport's threads: never made to wait
        self._tick_waited: dict[int, float] = {}  # event loop id -> seconds waited in its current tick
        self.dropped_by_run: dict[str, dict[str, int]] = {}  # runId -> reason -> events lost
        self._detached_lost: dict[Any, int] = {}  # runId -> events lost detached, not yet attributed
        self._lost_run: Any = None  # the run of the current streak of detached losses…
        self._lost_run_n = 0  # …and how many it lost (folded into _detached_lost when it ends)
        self._dropped_dirty = False  # totals changed since the last `dropped` frame
        self.longest_wait = 0.0  # seconds: the longest single wait for room so far

    # ---- app side, under the lock -------------------------------------------------------------
    def _no_room(self, size: int) -> bool:
        return self._unsent >= self._buffer_size or (
            self._unsent_bytes + size > self._max_buffer_bytes and self._unsent > 0
        )

    def _wait_for_room(self, size: int) -> None:
        """Called under the lock when the unsent part is at its bound: waits (bounded) for the write
        loop to take a batch. Returns with the lock held, with or without room."""
        if not self.attached or self._stalled or self._stopping:
            return
        ident = threading.get_ident()
        if ident in self._own_threads:
            return
        cond = self._cond
        start = now = time.monotonic()
        if self._waiting_since is None:  # the first wait since the last batch written
            self._waiting_since = start
        loop = running_loop()  # None off an event loop's thread (never imports asyncio)
        budget = self._tick_budget(loop) if loop is not None else None
        self._room_waiters += 1
        try:
            while self._no_room(size) and self.attached and not self._stalled and not self._stopping:
                # Since the last batch written, or since emitters began waiting after it: a hub that
                # was merely idle before this burst is not stalled. Waits on an event loop's thread,
                # each short, add up here too.
                idle = now - max(self._progress_at, self._waiting_since or 0.0)
                if idle >= STALL_S:
                    self._stalled = True
                    self._stall_drops = 0
                    self.counters["stalls"] += 1
                    break
                timeout = STALL_S - idle
                if budget is not None:
                    left = budget - (now - start)
                    if left <= 0:
                        break
                    timeout = min(timeout, left)
                cond.wait(timeout)
                now = time.monotonic()
        finally:
            self._room_waiters -= 1
        waited = now - start
        self.counters["waits"] += 1
        if waited > self.longest_wait:
            self.longest_wait = waited
        if loop is not None:
            self._tick_waited[id(loop)] = self._tick_waited.get(id(loop), 0.0) + waited

    def _tick_budget(self, loop: asyncio.AbstractEventLoop) -> float:
        """What this loop's current tick may still wait; the first wait of a tick schedules the
        reset, which runs when the loop gets control back (the next tick)."""
        key = id(loop)
        spent = self._tick_waited.get(key)
        if spent is None:
            self._tick_waited[key] = 0.0
            try:
                loop.call_soon(self._tick_waited.pop, key, None)
            except RuntimeError:  # a closing loop: do not wait on it at all
                return 0.0
            return LOOP_TICK_WAIT_S
        return LOOP_TICK_WAIT_S - spent

    def _may_drop_unsent(self) -> bool:
        """Under the lock, when the ring is over its bound and its oldest entry was never sent:
        whether it goes now. Attached and not stalled, it stays until the hard bound."""
        if not self.attached or self._stalled:
            return True
        return (
            len(self._ring) > OVERFLOW * self._buffer_size
            or self._ring_bytes > OVERFLOW * self._max_buffer_bytes
        )

    def _count_drop(self, run_id: Any) -> None:
        """One unsent event of that run fell out of the ring while attached (under the lock)."""
        self.counters["dropped"] += 1
        if not self.attached:
            reason = DETACHED
        elif self._stalled:
            reason = HUB_STALLED
            self._stall_drops += 1
        else:
            reason = OVERFLOW_REASON
        self._dropped_dirty = True
        self.count_lost(run_id if type(run_id) is str else "", reason)

    def _new_lost_run(self, run_id: Any) -> None:
        """A detached loss of another run than the streak's (under the lock): the streak is folded
        into the per-run totals, bounded like them, and a new one starts."""
        self._end_lost_streak()
        self._lost_run, self._lost_run_n = run_id, 1
        self._dropped_dirty = True

    def _end_lost_streak(self) -> None:
        if not self._lost_run_n:
            return
        lost = self._detached_lost
        run_id = self._lost_run
        if run_id not in lost and len(lost) >= MAX_RUNS_COUNTED:
            oldest = next(iter(lost))
            lost[""] = lost.get("", 0) + lost.pop(oldest)
        lost[run_id] = lost.get(run_id, 0) + self._lost_run_n
        self._lost_run, self._lost_run_n = None, 0

    def _fold_detached(self) -> None:
        """On attach (under the lock): what the ring lost while detached, by run. A run with events
        still in the ring gets its count (the hub will show it, partial); a run the ring lost whole
        is counted under "" (stats() and dispose() say it; the hub creates no empty run for it)."""
        self._end_lost_streak()
        if not self._detached_lost:
            return
        kept = {entry[2] for entry in self._ring}
        kept.update(self.dropped_by_run)
        for run_id, n in self._detached_lost.items():
            target = run_id if type(run_id) is str and run_id in kept else ""
            self.count_lost(target, DETACHED, n)
            self.counters["dropped"] += n  # from now on in the counter (`_dropped_total`)
        self._detached_lost = {}

    def _dropped_total(self) -> int:
        """Under the lock: every event lost so far. The detached ring counts its losses by run only
        (a streak, then `_detached_lost`: one addition per event, enqueue's hot path) until an
        attach folds them into the counter."""
        return self.counters["dropped"] + self._lost_run_n + sum(self._detached_lost.values())

    def count_lost(self, run_id: str, reason: str, n: int = 1) -> None:
        """Counts `n` events of a run that will never reach a hub, for the `dropped` frame (under
        the lock, or from any thread: a dict update is atomic). `run_id` "" when it is unknown."""
        runs = self.dropped_by_run
        reasons = runs.get(run_id)
        if reasons is None:
            if len(runs) >= MAX_RUNS_COUNTED:
                runs.pop(next(iter(runs)))
            reasons = runs[run_id] = {}
        reasons[reason] = reasons.get(reason, 0) + n
        self._dropped_dirty = True

    def report_lost(self, run_id: str, reason: str, n: int = 1) -> None:
        """Counts `n` events of a run lost before the ring (any thread); the hub hears of it."""
        with self._cond:
            self.count_lost(run_id, reason, n)
            self.counters["dropped"] += n
            if self._writer_idle:
                self._writer_idle = False
                self._cond.notify_all()

    def lost_by_reason(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        if self._detached_lost or self._lost_run_n:
            totals[DETACHED] = sum(self._detached_lost.values()) + self._lost_run_n
        for reasons in list(self.dropped_by_run.values()):
            for reason, n in list(reasons.items()):
                totals[reason] = totals.get(reason, 0) + n
        return totals

    # ---- transport side -----------------------------------------------------------------------
    def _progressed(self) -> None:
        """A batch was written (under the lock): a stall episode ends here."""
        self._progress_at = time.monotonic()
        self._waiting_since = None
        if self._stalled:
            self._end_stall("took events again")

    def _end_stall(self, how: str) -> None:
        """Under the lock: the stall episode is over; one warning naming what it cost."""
        self._stalled = False
        lost, self._stall_drops = self._stall_drops, 0
        if lost:
            self._warn(
                f"[graphmind] the hub at {self._options.url} took no events for {STALL_S:g} s while this "
                f"app's unsent events were at the buffer's bound ({self._buffer_size:,} events / "
                f"{self._max_buffer_bytes:,} bytes): {lost:,} event(s) were dropped, oldest first, until "
                f"it {how}. The run shows the count; stats()['dropped'] has it too.",
                key=f"hub-stalled-{self.counters['stalls']}",
            )
