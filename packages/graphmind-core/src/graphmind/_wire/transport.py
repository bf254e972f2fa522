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
  counted. This thread encodes an event when it first sends it and keeps the text for replays,
  so a detached app never encodes anything; it wakes once per batch and sends a batch as one frame
  to a hub that takes batch frames (`_write_loop.py`). On each attach the whole ring is sent again, oldest
  first; the hub stores an event once per (clientId, seq): a replay after a hub restart loses nothing.
- `close()` (dispose and the exit flush): waits while the hub keeps taking events, gives up after
  `FLUSH_IDLE_S` without progress or `FLUSH_CAP_S` in all, says what it could not send.
- Opening a connection (the token, hello, welcome) is `_hub_link.HubLink`, built with the
  transport: everything it calls from `websockets` is bound then, so an app that later patches
  `websockets.sync.client.connect` (a test mocking its own connections) never receives ours.
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
from .._base.warn import Warner
from .._config.options import Options
from . import exit_flush as _exit_flush
from .hub_link import HubLink
from .write_loop import WriteLoop

_log = logging.getLogger("graphmind.transport")

QUICK_RETRY_S = 0.1  # after losing an attached hub: retry this often…
QUICK_WINDOW_S = 10.0  # …for this long, then back off (doubling) to retry_interval
FLUSH_IDLE_S = 1.0  # dispose / exit: give up after this long without progress…
FLUSH_CAP_S = 10.0  # …or after this long in all


class Transport(WriteLoop):  # the write loop (one wake-up and one frame per batch): _write_loop.py
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
        self._lock = threading.Lock()  # enqueue's: a C-level `with` (`with cond` adds 2 Python calls)
        self._cond = threading.Condition(self._lock)
        self._buffer_size, self._max_buffer_bytes = options.buffer_size, options.max_buffer_bytes
        # [event dict, or its JSON text once sent; approximate size in characters]
        self._ring: deque[list[Any]] = deque()
        self._ring_bytes = 0
        self._unsent = 0  # the newest entries of the ring not yet written on this connection
        self._control: list[str] = []  # control frames (acks) for this connection only
        self._sending = 0  # entries the writer took and is writing now
        self._progress = 0  # batches written: what a flush watches
        self._writer_idle = False  # the write loop waits for work: the next enqueue wakes it
        self._lingering = False  # the write loop waits out its batching window (_write_loop.py)
        self._flushing = 0  # flush() calls waiting: the write loop opens no batching window
        self._batches = False  # this connection's hub takes batch frames (its welcome said so)
        self.attached = False
        self._connecting = False
        self._failed_attempts = 0  # connect attempts that ended without attaching (ready() watches)
        self._next_attempt = 0.0  # when the thread tries again after the last failure (monotonic)
        self._lost_at: float | None = None  # when an attached hub was last lost
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._ws: Any = None
        self._kick = threading.Event()
        self._attached_event = threading.Event()
        self.counters = {"buffered": 0, "dropped": 0, "sent": 0, "connects": 0, "connect_failures": 0}

    # ---- app side -----------------------------------------------------------------------------
    def enqueue(self, event: dict[str, Any], size: int) -> None:
        """Buffers one event (JSON-safe, owned by the transport from now on: never mutated again).
        `size`: about how many characters its JSON takes, for the byte budget."""
        entry = [event, size]
        with self._lock:
            ring = self._ring
            ring.append(entry)
            self._ring_bytes += size
            self._unsent += 1
            self.counters["buffered"] += 1
            while len(ring) > self._buffer_size or (
                self._ring_bytes > self._max_buffer_bytes and len(ring) > 1
            ):
                dropped = ring.popleft()
                self._ring_bytes -= dropped[1]
                if self._unsent > len(ring):
                    self._unsent -= 1
                    if type(dropped[0]) is not str:  # never sent to any hub: lost, and counted
                        self.counters["dropped"] += 1
            # notify_all: a flush() or ready() waiting on the same condition must not take the one
            # wake-up meant for the writer (it would then sleep out its idle wait, up to a second).
            if self._writer_idle:  # else the writer is awake and takes this event with its batch
                self._writer_idle = False
                self._cond.notify_all()
            elif self._lingering and event.get("type") == proto.EXEC_PAUSED:  # a held gate: now
                self._lingering = False
                self._cond.notify_all()
        if self._thread is None:
            self.start()

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
                if (
                    self._failed_attempts != seen
                    and not self._connecting
                    and not self._kick.is_set()
                    and self._next_attempt > deadline
                ):
                    return False  # nothing more will happen before the deadline: do not hold the app
                cond.wait(remaining)
            return True

    @property
    def buffered_count(self) -> int:
        return len(self._ring)

    @property
    def unsent_count(self) -> int:
        return self._unsent + self._sending

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
            self._flushing += 1  # no batching window while a flush waits (_write_loop.py)
            self._cond.notify_all()  # a writer waiting out its batching window sends now
            try:
                return self._flush_wait(seen, start, start, idle, cap)
            finally:
                self._flushing -= 1

    def _flush_wait(self, seen: int, start: float, last_change: float, idle: float, cap: float) -> int:
        """flush()'s wait, under the condition's lock."""
        while self._unsent or self._sending or self._control:
            now = time.monotonic()
            if now - start >= cap:
                break
            if not (self.attached or self._connecting or self._reconnecting(now)):
                break
            if self._progress != seen:
                seen, last_change = self._progress, now
            elif now - last_change >= idle:
                break
            self._cond.wait(0.02)
        return self._unsent + self._sending

    def close(self, idle: float = FLUSH_IDLE_S, cap: float = FLUSH_CAP_S) -> int:
        """dispose() and the exit flush: flush (bounded), then stop. Returns and reports what was not sent."""
        if self._thread is None:
            return 0
        left = self.flush(idle, cap)
        self.stop(graceful=left == 0)
        dropped = self.counters["dropped"]
        if (left or dropped) and self.counters["connects"]:
            where = f"the hub at {self._options.url}"
            self._warn(
                f"[graphmind] {left} event(s) could not be sent to {where} before closing (it stopped taking them)"
                f" and {dropped} were dropped earlier because the replay buffer was full; "
                "stats() counts them. Raise buffer_size / max_buffer_bytes, or keep the hub running until the app exits.",
                key="close-unsent",
            )
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

    def _retry_delay(self, failures: int) -> float:
        if self._lost_at is None:
            return self._options.retry_interval  # a hub that was never there
        since = time.monotonic() - self._lost_at
        if since < QUICK_WINDOW_S:
            return QUICK_RETRY_S
        doublings = min(30, max(0, failures - int(QUICK_WINDOW_S / QUICK_RETRY_S)))  # capped: no overflow
        return min(self._options.retry_interval, 0.5 * 2.0**doublings)

    def _main(self) -> None:
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
                delay = self._retry_delay(failures)
                with self._cond:
                    self._failed_attempts += 1
                    self._next_attempt = time.monotonic() + delay
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
            self._control = []
            self._batches = proto.takes_batches(welcome)
            self.attached = True
            self._lost_at = None
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
        try:
            for message in ws:
                frame = self._decode_frame(message)
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
        self._detach(ws)

    def _detach(self, ws: Any) -> None:
        with self._cond:
            if self._ws is not ws or not self.attached:
                return
            self.attached = False
            self._ws = None
            self._control = []
            if not self._stopping:
                self._unsent = len(self._ring)  # all of it is replayed on the next attach
                self._lost_at = time.monotonic()
            self._attached_event.clear()
            self._cond.notify_all()
        self._kick.set()  # the first retry is immediate
        with contextlib.suppress(Exception):
            ws.close()
        try:
            self._on_detach()
        except Exception as exc:  # pragma: no cover - defensive
            self._warn(f"[graphmind] internal error on detach: {exc!r}", key="on-detach")

    def _close_ws(self) -> None:
        ws = self._ws
        if ws is not None:
            self._detach(ws)
