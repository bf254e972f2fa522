"""The transport: one daemon thread per client owns the WebSocket; app threads only append to a buffer.

- Lazy: nothing starts until the first event (or `ready()`); the connect is bounded by
  `connect_timeout`, the `welcome` by `handshake_timeout`; a failed attempt retries every
  `retry_interval` (or at once when `ready()` asks).
- Every event goes into a replay ring (at most `buffer_size` events and about `max_buffer_bytes`
  of JSON, oldest dropped and counted) as the pipeline made it; this thread encodes it when it is
  first sent and keeps the text for later replays, so a detached app never encodes anything. On each attach the whole ring is sent again, oldest first; the hub
  stores an event once per (clientId, seq), so a replay after a hub restart loses nothing.
- A reader thread per connection hands hub frames to the client; the writer (the transport thread)
  is the only one that sends.
- Nothing here raises into the app: failures become one rate-limited warning or a debug log line.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from . import protocol as proto
from ._config import Options
from ._warn import Warner

_log = logging.getLogger("graphmind.transport")


class Transport:
    def __init__(
        self,
        options: Options,
        client_id: str,
        *,
        on_attach: Callable[[dict[str, Any]], None],
        on_frame: Callable[[dict[str, Any]], None],
        on_detach: Callable[[], None],
        warn: Warner,
    ) -> None:
        self._options = options
        self._client_id = client_id
        self._on_attach = on_attach
        self._on_frame = on_frame
        self._on_detach = on_detach
        self._warn = warn
        self._cond = threading.Condition(threading.Lock())
        # [event dict, or its JSON text once sent; approximate size in characters]
        self._ring: deque[list[Any]] = deque()
        self._ring_bytes = 0
        self._pending: list[
            list[Any]
        ] = []  # ring entries (and control frames) still to send on this connection
        self._sending = False  # the writer holds a batch it took from _pending and is writing it
        self.attached = False
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
        cond = self._cond
        with cond:
            ring = self._ring
            ring.append(entry)
            self._ring_bytes += size
            self.counters["buffered"] += 1
            while len(ring) > self._options.buffer_size or (
                self._ring_bytes > self._options.max_buffer_bytes and len(ring) > 1
            ):
                dropped = ring.popleft()
                self._ring_bytes -= dropped[1]
                self.counters["dropped"] += 1
            if self.attached:
                self._pending.append(entry)
                cond.notify()
        if self._thread is None:
            self.start()

    def send_control(self, frame: dict[str, Any]) -> None:
        """A control frame (ack) for the current connection only; never buffered for replay."""
        with self._cond:
            if self.attached:
                self._pending.append([proto.encode(frame), 0])
                self._cond.notify()

    def start(self) -> None:
        with self._cond:
            if self._thread is not None or self._stopping:
                return
            self._thread = threading.Thread(target=self._main, name="graphmind-transport", daemon=True)
        self._thread.start()

    def ready(self, timeout: float) -> bool:
        if self.attached:
            return True
        self.start()
        self._kick.set()
        return self._attached_event.wait(timeout)

    @property
    def buffered_count(self) -> int:
        return len(self._ring)

    def flush(self, timeout: float) -> None:
        """Waits (bounded) until what is pending on the current connection has been written."""
        deadline = threading.Event()
        timer = threading.Timer(timeout, deadline.set)
        timer.daemon = True
        timer.start()
        try:
            with self._cond:
                while self.attached and (self._pending or self._sending) and not deadline.is_set():
                    self._cond.wait(0.02)
        finally:
            timer.cancel()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._kick.set()
        self._close_ws()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)

    # ---- transport thread ---------------------------------------------------------------------
    def _main(self) -> None:
        while not self._stopping:
            try:
                connected = self._connect()
            except Exception as exc:  # pragma: no cover - defensive: never let the thread die
                self._warn(f"[graphmind] transport error: {exc!r}", key="transport-connect")
                connected = False
            if not connected:
                self.counters["connect_failures"] += 1
                self._kick.wait(self._options.retry_interval)
                self._kick.clear()
                continue
            self._write_loop()
            self._kick.clear()

    def _connect(self) -> bool:
        from websockets.sync.client import connect

        opts = self._options
        # websockets >= 17 warns unless direct (non-`with`) use is declared; older versions lack the flag.
        legacy: dict[str, Any] = {"legacy": True} if "legacy" in inspect.signature(connect).parameters else {}
        try:
            ws = connect(  # type: ignore[call-overload,unused-ignore]
                opts.url,
                open_timeout=opts.connect_timeout + opts.handshake_timeout,
                close_timeout=0.5,
                max_size=None,
                compression=None,
                user_agent_header=f"graphmind-python/{opts.sdk.get('version', '')}",
                **legacy,
            )
        except Exception as exc:
            _log.debug("graphmind: no hub at %s (%r)", opts.url, exc)
            return False
        try:
            ws.send(
                proto.encode(
                    proto.hello(
                        app=opts.app, sdk=opts.sdk, pid=os.getpid(), client_id=self._client_id, meta=opts.meta
                    )
                )
            )
            welcome = proto.decode(ws.recv(timeout=opts.handshake_timeout))
            if welcome is None or welcome.get("type") != proto.WELCOME:
                code = welcome.get("code") if welcome else None
                self._warn(
                    f"[graphmind] the hub at {opts.url} refused the handshake ({code or 'no welcome'}); "
                    "running detached. Check that graphmind-server and graphmind-core versions match.",
                    key="handshake",
                )
                ws.close()
                return False
            if welcome.get("protocol") not in proto.SUPPORTED_PROTOCOLS:
                self._warn(
                    f"[graphmind] the hub at {opts.url} chose protocol {welcome.get('protocol')!r}, which this SDK "
                    "does not speak; running detached. Upgrade graphmind-core.",
                    key="handshake",
                )
                ws.close()
                return False
        except Exception as exc:
            _log.debug("graphmind: handshake with %s failed (%r)", opts.url, exc)
            with contextlib.suppress(Exception):
                ws.close()
            return False
        with self._cond:
            if self._stopping:
                ws.close()
                return False
            self._ws = ws
            # Replay everything buffered, oldest first, before anything new.
            self._pending = list(self._ring)
            self.attached = True
            self.counters["connects"] += 1
        try:
            self._on_attach(welcome)
        except Exception as exc:  # pragma: no cover - defensive
            self._warn(f"[graphmind] internal error on attach: {exc!r}", key="on-attach")
        self._attached_event.set()
        threading.Thread(target=self._read_loop, args=(ws,), name="graphmind-reader", daemon=True).start()
        return True

    def _write_loop(self) -> None:
        cond = self._cond
        while True:
            with cond:
                while self.attached and not self._pending and not self._stopping:
                    cond.wait(1.0)
                if not self.attached:
                    return
                batch, self._pending = self._pending, []
                self._sending = True
                ws = self._ws
            try:
                sent = 0
                for entry in batch:
                    text = entry[0]
                    if type(text) is not str:
                        text = self._encode(entry)
                    if not text:
                        continue
                    ws.send(text)
                    sent += 1
                self.counters["sent"] += sent
            except Exception as exc:
                _log.debug("graphmind: send failed (%r)", exc)
                with cond:
                    self._sending = False
                self._detach(ws)
                return
            with cond:
                self._sending = False
                cond.notify_all()  # flush() waiters
                if self._stopping and not self._pending:
                    return

    def _encode(self, entry: list[Any]) -> str | None:
        """The entry's JSON text, kept in the entry for replays; None (and a warning) if it has none."""
        try:
            text = proto.encode(entry[0])
        except Exception as exc:  # the pipeline makes every event JSON-safe; never let one stop the writer
            self._warn(f"[graphmind] dropped an event that could not be encoded: {exc!r}", key="encode")
            entry[0] = ""  # a replay skips it too, without a second warning
            return None
        entry[0] = text
        return text

    def _read_loop(self, ws: Any) -> None:
        try:
            for message in ws:
                frame = proto.decode(message)
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
            self._pending = []
            self._attached_event.clear()
            self._cond.notify_all()
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
