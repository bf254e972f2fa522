"""The transport thread's write loop: what it wakes for, and how the ring's events become frames.

Split from `transport.py` (which owns the ring, the state and the connection's life); `Transport`
inherits this loop, and `flush()`, which waits on its progress. Two things keep an attached app's own
thread cheap (issue 17):

- **One wake-up per batch, not per event.** `enqueue` wakes this thread only while it waits idle
  (`_writer_idle`); an event appended while it is awake joins the batch it takes next. Once woken,
  it lingers `LINGER_S` (5 ms) before taking the batch, so an app making calls back to back shares
  one wake-up among all the events of that window. Each wake-up is a futex call on the app's thread
  and a GIL hand-off (the woken thread takes the GIL when the app's thread releases it, in any
  syscall, and the app's thread then waits to get it back); an SDK call that releases the GIL a few
  times (openai's `os.urandom`, httpx) woke the writer once per call, which cost the calling thread
  about as much CPU as the call's own bookkeeping (docs/performance.md). The control path's events
  end the window at once (`CONTROL_EVENTS`): a held gate is never delayed, and neither is the
  `exec.resumed` the hub waits for before it answers the person who clicked (issue 37: 5 ms of every
  answer's round trip).
- **One frame per batch, not per event**, to a hub that advertised batch frames in its `welcome`
  (`capabilities: ["batch"]`, docs/protocol.md): the events' texts joined into one text frame, so
  one `ws.send` (one lock, one mask, one `sendall` that releases and retakes the GIL) carries them
  all. A hub that did not advertise it gets one frame per event, as before.

Each entry keeps its own JSON text (encoded here, once, the first time it is sent) for replays: a
batch frame is built from those texts, never re-encoded, so the hub stores the same bytes whichever
way an event travelled.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

from .. import protocol as proto
from .._base.warn import Warner
from .._events.jsonsafe import describe_huge_ints

_log = logging.getLogger("graphmind.transport")

# Events taken from the ring between two looks at it. A thread that must wait up to the switch
# interval (5 ms) for the GIL after each send has to take all that an app makes meanwhile (~400
# events back to back here): 256 fell behind such an app and its ring overflowed.
BATCH = 2048
MAX_FRAME_CHARS = 1 << 20  # a batch frame holds events up to about this much text (1 MiB)
# After an idle wake-up the writer waits this long before taking the batch (nothing wakes it
# meanwhile), so the events the app makes in that window share one wake-up and one frame. An
# event of the control path cuts the window short: a held gate reaches the hub (and the human) at
# once, and so does the app's confirmation of an answer, which the hub's POST /api/gates waits for.
LINGER_S = 0.005
CONTROL_EVENTS = frozenset({proto.EXEC_PAUSED, proto.EXEC_RESUMED})
FLUSH_IDLE_S = 1.0  # dispose / exit: give up after this long without progress…
FLUSH_CAP_S = 10.0  # …or after this long in all
# …or, for a listener that never finished a handshake (a hub too busy to answer, or something that
# is no hub), after this many more handshakes failed during the flush: a busy hub answers the
# next one, a listener that never answers cost 9.9 s at exit before this bound (~2 s now).
FLUSH_BUSY_TRIES = 2


def frames(texts: list[str], batches: bool) -> Iterator[str]:
    """The frames carrying `texts` in order: batch frames of up to MAX_FRAME_CHARS (an event alone
    in its group, or any event for a hub without batch frames, goes as its own frame)."""
    if not batches or len(texts) <= 1:  # none: a wake-up for control frames only sends no batch
        yield from texts
        return
    if sum(map(len, texts)) + len(texts) <= MAX_FRAME_CHARS:  # the usual case: no per-text loop
        yield proto.batch(texts)
        return
    group: list[str] = []
    size = 0
    for text in texts:
        if group and size + len(text) > MAX_FRAME_CHARS:
            yield group[0] if len(group) == 1 else proto.batch(group)
            group, size = [], 0
        group.append(text)
        size += len(text) + 1
    if group:
        yield group[0] if len(group) == 1 else proto.batch(group)


class WriteLoop:
    # Set by Transport.__init__ / _connect / _detach (see there).
    _cond: threading.Condition
    _ring: deque[list[Any]]
    _unsent: int
    _unsent_bytes: int
    _sending: int
    _progress: int
    _control: list[str]
    _stopping: bool
    _ws: Any
    _encode_frame: Callable[[dict[str, Any]], str]
    _warn: Warner
    attached: bool
    counters: dict[str, int]
    _writer_idle: bool  # True only while the write loop waits for work: then enqueue wakes it
    _lingering: bool  # True while it waits out LINGER_S: then only an exec.paused wakes it
    _flushing: int  # flush() calls waiting: no window then
    _batches: bool  # the hub of this connection takes batch frames
    _reports_drops: bool  # the hub of this connection takes `dropped` frames
    _dropped_dirty: bool  # loss totals changed since the last `dropped` frame (_wire/backpressure.py)
    _room_waiters: int  # emitters waiting for room in the ring (_wire/backpressure.py)
    dropped_by_run: dict[str, dict[str, int]]

    _lost_at: float | None
    _busy_hub: bool
    _failed_attempts: int
    _connecting: bool
    _kick: threading.Event

    def _reconnecting(self, now: float) -> bool:  # pragma: no cover - Transport's
        raise NotImplementedError

    def flush(self, idle: float = FLUSH_IDLE_S, cap: float = FLUSH_CAP_S) -> int:
        """Waits while the hub keeps taking events; returns how many are still unsent.

        Gives up after `idle` seconds without a batch written (a hub that stopped answering, or
        none to connect to) or `cap` seconds in all. A connect in progress, or a hub lost moments
        ago, is waited for within the same bounds."""
        start = time.monotonic()
        if self._lost_at is not None:
            self._kick.set()  # a thread backing off from a lost hub retries now
        with self._cond:
            seen = self._progress
            self._flushing += 1  # no batching window while a flush waits (write_loop.py)
            self._cond.notify_all()  # a writer waiting out its batching window sends now
            try:
                return self._flush_wait(seen, start, start, idle, cap, self._failed_attempts)
            finally:
                self._flushing -= 1

    def _flush_wait(
        self, seen: int, start: float, last_change: float, idle: float, cap: float, failed: int
    ) -> int:
        """flush()'s wait, under the condition's lock (`failed`: the failed attempts before it)."""
        while self._unsent or self._sending or self._control or (self._dropped_dirty and self._reports_drops):
            now = time.monotonic()
            if now - start >= cap:
                break
            if not (self.attached or self._connecting or self._reconnecting(now)):
                break
            if self._progress != seen:
                seen, last_change = self._progress, now
            elif now - last_change >= idle and not self.attached and not self._busy_hub:
                # Idle only with no hub listening. Else up to `cap`: 1 s without a batch is no dead hub
                # among 200 threads at the GIL (issue 29); the keepalive cuts a frozen one in ~6 s.
                break
            elif not self.attached and self._failed_attempts - failed >= FLUSH_BUSY_TRIES:
                break  # a listener that failed every handshake of the flush (FLUSH_BUSY_TRIES)
            self._cond.wait(0.02)
        return self._unsent + self._sending

    def _detach(self, ws: Any) -> None:  # pragma: no cover - Transport's
        raise NotImplementedError

    def _progressed(self) -> None:  # pragma: no cover - Backpressure's
        raise NotImplementedError

    def _question(self, now: float) -> str | None:  # pragma: no cover - Confirming's
        raise NotImplementedError

    def _has_work(self) -> bool:
        return bool(self._unsent or self._control or (self._dropped_dirty and self._reports_drops))

    def _write_loop(self) -> None:
        cond = self._cond
        ring = self._ring
        while True:
            with cond:
                if self.attached and not self._has_work() and not self._stopping:
                    while self.attached and not self._has_work() and not self._stopping:
                        self._writer_idle = True
                        cond.wait(1.0)
                    self._writer_idle = False
                    if (
                        LINGER_S > 0
                        and self.attached
                        and not self._stopping
                        and not self._control
                        and not self._flushing
                        and not self._control_event_waiting()
                    ):
                        self._lingering = True
                        cond.wait(
                            LINGER_S
                        )  # the window: only a control event or frame, a flush or stop() cut it
                        self._lingering = False
                if not self.attached or (self._stopping and not self._has_work()):
                    return
                control, self._control = self._control, []
                count = min(self._unsent, BATCH)
                first = len(ring) - self._unsent
                batch = list(islice(ring, first, first + count))
                self._unsent -= count
                self._unsent_bytes -= sum([entry[1] for entry in batch])
                self._sending = count
                ws = self._ws
                batches = self._batches
                lost = None
                if self._dropped_dirty and self._reports_drops:  # the totals so far: idempotent
                    self._dropped_dirty = False
                    lost = proto.dropped(self.dropped_by_run)
                question = self._question(time.monotonic())  # sent, left the ring: stored? (confirm.py)
                if self._room_waiters:
                    cond.notify_all()  # emitters waiting for room: there is some now
            try:
                for frame in control:
                    ws.send(frame)
                texts: list[str] = []
                for entry in batch:
                    text: str | None = entry[0]
                    if type(text) is not str:
                        text = self._encode(entry)
                    if text:
                        texts.append(text)
                for frame in frames(texts, batches):
                    ws.send(frame)
                if lost is not None:
                    ws.send(self._encode_frame(lost))
                if question is not None:
                    ws.send(question)
            except Exception as exc:
                _log.debug("graphmind: send failed (%r)", exc)
                with cond:
                    self._sending = 0
                    cond.notify_all()
                self._detach(ws)
                return
            with cond:
                self.counters["sent"] += len(texts)
                self._sending = 0
                self._progress += 1
                self._progressed()
                cond.notify_all()  # flush() and room waiters

    def _control_event_waiting(self) -> bool:
        """An exec.paused or exec.resumed among the unsent events (appended before this thread could
        mark its window open, so its enqueue did not cut it). Under the lock; the unsent tail is a few events here."""
        left = self._unsent
        for entry in reversed(self._ring):  # from the newest: no walk over a full ring's sent part
            if left <= 0:
                return False
            left -= 1
            event = entry[0]
            if type(event) is dict and event.get("type") in CONTROL_EVENTS:
                return True
        return False

    def _encode(self, entry: list[Any]) -> str | None:
        """The entry's JSON text, kept in the entry for replays; None (and a warning) if it has none."""
        text: str | None
        try:
            text = self._encode_frame(entry[0])
        except ValueError:
            # An int of more than 4,300 digits (sys.get_int_max_str_digits) is JSON-safe yet has no
            # decimal spelling: it goes as its size, and the rest of the event as it is.
            text = self._encode_described(entry)
        except Exception as exc:  # the pipeline makes every event JSON-safe; never let one stop the writer
            self._refuse(entry, exc)
            return None
        if text is None:
            return None
        if len(text) * 4 > proto.INGEST_MAX_FRAME and len(text.encode("utf-8")) > proto.INGEST_MAX_FRAME:
            # The hub closes a connection on a frame over its limit (1009): sending this one would
            # cut every attach short at the same event, forever. Its payloads are already bounded
            # (512 KB each); what is left is an error or a name far beyond any real one.
            self._warn(
                f"[graphmind] dropped a {entry[0].get('type')} event of {len(text.encode('utf-8'))} bytes: over "
                f"the hub's frame limit of {proto.INGEST_MAX_FRAME} bytes; stats() counts it",
                key="too-big",
            )
            entry[0] = ""
            with self._cond:
                self.counters["dropped"] += 1
            return None
        entry[0] = text
        return text

    def _encode_described(self, entry: list[Any]) -> str | None:
        try:
            return self._encode_frame(describe_huge_ints(entry[0]))
        except Exception as exc:
            self._refuse(entry, exc)
            return None

    def _refuse(self, entry: list[Any], exc: BaseException) -> None:
        """Only this entry is lost, and it is counted; the rest of its batch goes as usual."""
        with self._cond:
            self.counters["dropped"] += 1
        self._warn(
            f"[graphmind] dropped an event that could not be encoded: {exc!r}; stats()['dropped'] counts it",
            key="encode",
        )
        entry[0] = ""  # a replay skips it too, without a second warning or count
