"""The transport: one daemon thread per client owns the WebSocket; app threads only append to a ring.

- Lazy: nothing starts until the first event (or `ready()`); the TCP connect is bounded by
  `connect_timeout`, the upgrade and the `welcome` together by `handshake_timeout` (`_hub_link`);
  `ready()` waits while an attempt is under way or due before its timeout, never longer. A hub
  that was never there is retried every `retry_interval` (or at once when `ready()` or a flush
  asks); a hub this client was attached to and lost is retried at once and then every
  `QUICK_RETRY_S` for `QUICK_WINDOW_S`, then with a doubling delay up to `retry_interval`, so a
  restarted hub gets the ring before it overflows.
- The ring is the only queue: every event goes into it (at most `buffer_size` events and about
  `max_buffer_bytes` of JSON) as the pipeline made it, and `_unsent` counts its newest entries not
  yet written on the current connection. When the ring is full the oldest entry goes: one never
  sent to any hub counts in `dropped`, so the unsent backlog is bounded and every lost event is
  counted. Attached, an emitter whose event would push an unsent one out waits for the write loop
  instead, bounded in time (`_wire/backpressure.py`). This thread encodes an event when it first sends
  it and keeps the text for replays (a detached app never encodes); it wakes once per batch and
  sends a batch as one frame (`_wire/write_loop.py`). Each attach sends the whole ring again, oldest
  first; the hub stores an event once per (clientId, seq): a replay after a hub restart loses nothing.
- `close()` (dispose and the exit flush): waits while attached (a frozen hub is cut by the
  keepalive, `hub_link.py`) or while a listening hub's handshake is under way, at most
  `FLUSH_CAP_S` in all; with no hub listening it gives up after `FLUSH_IDLE_S`. It says what it
  could not send, and counts it in `dropped`.
- Opening a connection (the token, hello, welcome) is `_hub_link.HubLink`, built with the transport:
  all it calls from `websockets` is bound then, so an app patching `connect` later never gets ours.
- Nothing here raises into the app, and no exception a connect attempt raises (BaseException
  included) ends the thread: failures become one rate-limited warning or a debug log line.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from .. import protocol as proto
from .._base import forksafe
from .._base.warn import Warner
from .._config.options import Options
from . import exit_flush as _exit_flush
from .backpressure import Backpressure
from .confirm import Confirming
from .hub_link import QUICK_WINDOW_S, HubLink, retry_delay
from .loss_report import close_warning, unconfirmed_warning
from .ring import Ring
from .write_loop import FLUSH_CAP_S, FLUSH_IDLE_S, WriteLoop

_log = logging.getLogger("graphmind.transport")


# The ring (enqueue, drop-oldest): ring.py; the write loop (one wake-up and one frame per batch):
# write_loop.py; waiting for room: backpressure.py
class Transport(Backpressure, Confirming, WriteLoop, Ring):
    def __init__(
        self,
        options: Options,
        client_id: str,
        *,
        on_attach: Callable[[dict[str, Any]], None],
        on_frame: Callable[[dict[str, Any]], None],
        on_detach: Callable[[], None],
        warn: Warner,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        self._link = HubLink(options, client_id, warn)  # binds websockets now (see the module docstring)
        self.hello_extra = self._link.hello_extra
        self._encode_frame = self._link.encode
        self._decode_frame = self._link.decode
        self._thread_class = threading.Thread
        self._options = options
        self._client_id = client_id
        self._on_attach = on_attach
        self._on_frame = on_frame
        self._on_detach = on_detach
        self._on_exit = on_exit
        self._warn = warn
        self._lock = forksafe.lock()  # enqueue takes it by hand (`with cond` adds 2 Python calls)
        self._cond = forksafe.condition(self._lock)
        self._buffer_size, self._max_buffer_bytes = options.buffer_size, options.max_buffer_bytes
        # [event dict, or its JSON text once sent; approximate size in characters]
        self._ring: deque[list[Any]] = deque()
        self._ring_bytes = 0
        self._unsent = 0  # the newest entries of the ring not yet written on this connection
        self._unsent_bytes = 0  # their approximate JSON size
        self._control: list[str] = []  # control frames (acks) for this connection only
        self._sending = 0  # entries the writer took and is writing now
        self._progress = 0  # batches written: what a flush watches
        self._writer_idle = False  # the write loop waits for work: the next enqueue wakes it
        self._lingering = False  # the write loop waits out its batching window (_wire/write_loop.py)
        self._flushing = 0  # flush() calls waiting: the write loop opens no batching window
        self._batches = False  # this connection's hub takes batch frames (its welcome said so)
        self._reports_drops = False  # this connection's hub takes `dropped` frames
        # Events lost before they reached the ring (the client's pipeline): part of the exit total.
        self.dropped_elsewhere: Callable[[], int] = lambda: 0
        self.attached = False
        self._connecting = False
        self._failed_attempts = 0  # connect attempts that ended without attaching (ready() watches)
        self._next_attempt = 0.0  # when the thread tries again after the last failure (monotonic)
        self._lost_at: float | None = None  # when an attached hub was last lost
        self._busy_hub = False  # a listening hub failed the handshake: retried soon, waited for at exit
        self._next_attempt_for_ready = 0.0
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._ws: Any = None
        self._kick = forksafe.event()
        self._attached_event = forksafe.event()
        # "dropped" here counts every loss but the detached ring's, kept by run until an attach
        # folds them in (backpressure.py); `dropped_count` is the sum.
        self.counters = dict.fromkeys(("dropped", "unconfirmed", "sent", "connects", "connect_failures"), 0)
        self.counters.update(waits=0, stalls=0)  # waits for room, stall episodes (_wire/backpressure.py)
        self._init_backpressure()
        self._init_confirming()

    # ---- app side (enqueue: ring.py) -------------------------------------------------------
    def send_control(self, frame: dict[str, Any]) -> None:
        """A control frame (ack) for the current connection only; never buffered for replay."""
        with self._cond:
            if self.attached:
                self._control.append(self._encode_frame(frame))
                self._writer_idle = False
                self._cond.notify_all()

    def start(self) -> None:
        with self._cond:
            if self._thread is not None or self._stopping:
                return
            self._thread = self._thread_class(target=self._main, name="graphmind-transport", daemon=True)
        if self._on_exit is not None:
            _exit_flush.register(self._on_exit)
        self._thread.start()

    def ready(self, timeout: float) -> bool:
        """Connects now; True once attached (the welcome handled), False after `timeout`, or sooner when
        the attempt this call asked for (or shared) failed and the next one is not due before then."""
        if self._attached_event.is_set():
            return True
        deadline = time.monotonic() + timeout
        cond = self._cond
        with cond:
            seen = self._failed_attempts
        self.start()
        self._kick.set()
        with cond:
            while not self._attached_event.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                # An attempt under way counts only if ready() would have waited for it: a listening
                # hub that failed the handshake is retried at once (the busy-hub rule), and waiting
                # for that retry made a silent port cost the first call two handshake timeouts.
                in_flight = (self._connecting or self._kick.is_set()) and not self._busy_hub
                if (
                    self._failed_attempts != seen
                    and not in_flight
                    and self._next_attempt_for_ready > deadline
                ):
                    return False  # nothing more will happen before the deadline: do not hold the app
                cond.wait(remaining)
            return True

    @property
    def buffered_count(self) -> int:
        return len(self._ring)

    @property
    def dropped_count(self) -> int:
        """Events lost so far (stats()["dropped"], with the pipeline's), whatever the reason."""
        with self._cond:
            return self._dropped_total()

    @property
    def unsent_count(self) -> int:
        return self._unsent + self._sending

    def close(self, idle: float = FLUSH_IDLE_S, cap: float = FLUSH_CAP_S) -> int:
        """dispose() and the exit flush: flush (bounded), then stop. Returns what was not sent; from
        then on those count in `dropped` (the hub will never have them) and one warning says the
        same total as stats()["dropped"], whether or not this client ever attached."""
        if self._thread is None:
            return 0
        started = time.monotonic()
        left = self.flush(idle, cap)
        self._confirm_before_close(min(max(cap - (time.monotonic() - started), 0.0), idle * 2))
        with self._cond:
            self._stalled = False  # the warning below names every loss, this episode's too
            self._stall_drops = 0
        self.stop(graceful=left == 0)
        with self._cond:
            self.counters["dropped"] += left
            self._settle_at_close()
            self._unsent = self._sending = 0  # counted as dropped now, not as unsent too
            dropped = self._dropped_total()
        dropped, url = dropped + self.dropped_elsewhere(), self._options.url
        ever = bool(self.counters["connects"])
        warning = close_warning(dropped, left, attached_ever=ever, reached=self._link.reached, url=url)
        if warning is not None:
            self._warn(warning, key="close-unsent")
        warning = unconfirmed_warning(self.counters["unconfirmed"], url=url)
        if warning is not None:
            self._warn(warning, key="close-unconfirmed")
        return left

    def stop(self, graceful: bool = True) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._kick.set()
        ws = self._ws
        if ws is not None and not graceful:
            # The hub stopped reading: a closing handshake would block behind a full socket. Cut it.
            with contextlib.suppress(Exception):
                ws.socket.shutdown(socket.SHUT_RDWR)
        self._close_ws()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)

    # ---- transport thread ---------------------------------------------------------------------
    def _reconnecting(self, now: float) -> bool:
        return self._lost_at is not None and now - self._lost_at < QUICK_WINDOW_S

    def _main(self) -> None:
        self._own_threads.add(threading.get_ident())
        failures = 0
        reported = False
        while not self._stopping:
            with self._cond:
                self._connecting = True  # before ready() can see the kick consumed
            try:
                connected = self._connect()
            except BaseException as exc:  # a patched or broken connect: KeyboardInterrupt included
                connected = False
                self._connecting = False
                if not reported:
                    reported = True
                    with contextlib.suppress(BaseException):
                        self._warn(
                            f"[graphmind] connecting to the hub raised {exc!r}; retrying",
                            key="transport-connect",
                        )
            if not connected:
                failures += 1
                self.counters["connect_failures"] += 1
                if not self._link.last_reached:
                    self._busy_hub = False  # refused: nobody listens (any more)
                elif self._lost_at is None:
                    # A listening hub failed the handshake (busy): retried like a lost one (issue 29).
                    self._lost_at = time.monotonic()
                    self._busy_hub = True
                delay = retry_delay(self._lost_at, failures, self._options.retry_interval)
                with self._cond:
                    self._failed_attempts += 1
                    self._next_attempt = time.monotonic() + delay
                    # ready() waits for the retries it would have had without the busy-hub rule.
                    busy_next = time.monotonic() + self._options.retry_interval
                    self._next_attempt_for_ready = busy_next if self._busy_hub else self._next_attempt
                    self._cond.notify_all()  # ready() waiters: is another attempt due before their deadline?
                self._kick.wait(delay)
                self._kick.clear()
                continue
            failures = 0
            try:
                self._write_loop()
            except BaseException as exc:  # never let the thread die
                _log.debug("graphmind: writer stopped (%r)", exc)
                self._close_ws()
            self._kick.clear()

    def _connect(self) -> bool:
        self._connecting = True
        try:
            opened = self._link.open()
        finally:
            self._connecting = False
        if opened is None:
            return False
        ws, welcome = opened
        with self._cond:
            if self._stopping:
                ws.close()
                return False
            self._ws = ws
            # Replay everything buffered, oldest first, before anything new.
            self._unsent = len(self._ring)
            self._unsent_bytes = self._ring_bytes
            self._control = []
            self._batches = proto.takes_batches(welcome)
            self._reports_drops = proto.has_capability(welcome, proto.DROPPED)
            self._confirming = proto.has_capability(welcome, proto.STORED)
            self._fold_detached()
            self._dropped_dirty = bool(self.dropped_by_run)  # this hub hears the totals so far
            self._progress_at = time.monotonic()
            self._waiting_since = None
            self.attached = True
            self._lost_at = None
            self._busy_hub = False
            self.counters["connects"] += 1
        try:
            self._on_attach(welcome)
        except Exception as exc:  # pragma: no cover - defensive
            self._warn(f"[graphmind] internal error on attach: {exc!r}", key="on-attach")
        self._attached_event.set()
        with self._cond:
            self._cond.notify_all()  # ready() waiters
        self._thread_class(target=self._read_loop, args=(ws,), name="graphmind-reader", daemon=True).start()
        return True

    def _read_loop(self, ws: Any) -> None:
        self._own_threads.add(threading.get_ident())
        try:
            for message in ws:
                try:  # never let one frame cut the connection (held gates would go)
                    frame = self._decode_frame(message)
                except Exception:
                    frame = None
                if frame is not None and frame.get("type") == proto.STORED_ANSWER:
                    self._stored_answer(frame)
                    continue
                if frame is None:
                    self._warn(
                        "[graphmind] ignored a frame from the hub that is not a JSON object with a type",
                        key="bad-frame",
                    )
                    continue
                try:
                    self._on_frame(frame)
                except Exception as exc:
                    self._warn(f"[graphmind] internal error handling a hub frame: {exc!r}", key="on-frame")
        except Exception as exc:
            _log.debug("graphmind: connection lost (%r)", exc)
        try:
            self._detach(ws)
        finally:
            self._own_threads.discard(threading.get_ident())  # a later app thread may get this ident

    def _detach(self, ws: Any) -> None:
        with self._cond:
            if self._ws is not ws or not self.attached:
                return
            self.attached = False
            self._ws = None
            self._control = []
            self._unconfirmed.unanswered()
            if self._stalled:
                self._end_stall("was lost")
            if not self._stopping:
                self._unsent = len(self._ring)  # all of it is replayed on the next attach
                self._unsent_bytes = self._ring_bytes
                self._lost_at = time.monotonic()
            self._attached_event.clear()
            self._cond.notify_all()
        self._kick.set()  # the first retry is immediate
        try:  # held gates continue before the close, which may wait out its timeout on a frozen hub
            self._on_detach()
        except Exception as exc:  # pragma: no cover - defensive
            self._warn(f"[graphmind] internal error on detach: {exc!r}", key="on-detach")
        with contextlib.suppress(Exception):
            ws.close()

    def _close_ws(self) -> None:
        ws = self._ws
        if ws is not None:
            self._detach(ws)
