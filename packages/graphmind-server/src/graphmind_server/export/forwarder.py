"""`graphmind serve --otlp-endpoint URL`: each finished run goes to an OTLP collector as it ends.

The hub only offers a run id to a bounded queue (never blocks; a full queue drops and counts). One
daemon thread reads the run from the database (its own read-only connection) and posts it, so a
slow or dead collector costs the hub nothing but the queue's slots. Counts are in /api/health.

A collector that is down, unreachable or answers 429 / 5xx is tried again with the same run, after
a backoff (RETRY_MIN_S doubling to RETRY_MAX_S), while the queue holds the runs that end
meanwhile (a full queue drops and counts, as always); one stderr line per LOG_INTERVAL_S says so,
and one when delivery works again. A refusal that retrying cannot fix (another 4xx, a run deleted
meanwhile) counts in `failed` and the forwarder goes on with the next run.
"""

from __future__ import annotations

import contextlib
import queue
import sqlite3
import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from graphmind.redaction import strip_secret_keys

from ..store.items import Committed
from ..store.status import FINAL_STATUSES
from . import otlp
from .otlp_http import CollectorUnavailable, OtlpTarget
from .source import ExportError, iter_events, open_readonly

QUEUE_MAX = 1000
RETRY_MIN_S = 0.5
RETRY_MAX_S = 30.0
LOG_INTERVAL_S = 60.0
_REMEMBERED = 10_000
_STOP = ""


class OtlpForwarder:
    def __init__(self, db: Path, target: OtlpTarget, *, queue_max: int = QUEUE_MAX) -> None:
        self.db = db
        self.target = target
        self._queue: queue.Queue[str] = queue.Queue(queue_max)
        self._sent_status: OrderedDict[str, str] = OrderedDict()  # run id -> the status last forwarded
        self._lock = threading.Lock()
        self.sent = 0
        self.failed = 0
        self.dropped = 0
        self.last_error: str | None = None
        self._stopping = False
        self._wake = threading.Event()
        self._failing_since: float | None = None
        self._logged_at = 0.0
        self._thread = threading.Thread(target=self._loop, name="graphmind-otlp-forwarder", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        """Stop taking runs; wait briefly for the thread (a post to a hanging collector is not waited for)."""
        self._stopping = True
        self._wake.set()
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(_STOP)
        self._thread.join(timeout)

    def on_commit(self, committed: Committed) -> None:
        """Called on the hub's event loop after each commit: offer every run that just ended."""
        for _cursor, run in committed.runs:
            status = run.get("status")
            if (status in FINAL_STATUSES or status == "abandoned") and self._sent_status.get(
                run["id"]
            ) != status:
                self._sent_status[run["id"]] = status
                self._sent_status.move_to_end(run["id"])
                if len(self._sent_status) > _REMEMBERED:
                    self._sent_status.popitem(last=False)
                self.offer(run["id"])

    def offer(self, run_id: str) -> None:
        if self._stopping:
            return
        try:
            self._queue.put_nowait(run_id)
        except queue.Full:
            with self._lock:
                self.dropped += 1

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "endpoint": self.target.url,
                "protocol": self.target.protocol,
                "queued": self._queue.qsize(),
                "sent": self.sent,
                "failed": self.failed,
                "dropped": self.dropped,
                "lastError": self.last_error,
            }

    def _loop(self) -> None:
        conn: sqlite3.Connection | None = None
        while True:
            run_id = self._queue.get()
            if run_id == _STOP:
                break
            delay = RETRY_MIN_S
            while True:
                try:
                    if conn is None:
                        conn = open_readonly(self.db)
                    self.target.post(self._request(conn, run_id))
                except CollectorUnavailable as exc:
                    with self._lock:
                        self.last_error = str(exc)
                    if self._stopping:
                        with self._lock:
                            self.failed += 1
                        break
                    self._say_unavailable(str(exc), delay)
                    self._wake.wait(delay)
                    delay = min(RETRY_MAX_S, delay * 2)
                    continue
                except (ExportError, sqlite3.Error) as exc:
                    with self._lock:
                        self.failed += 1
                        self.last_error = str(exc)
                    break
                with self._lock:
                    self.sent += 1
                if self._failing_since is not None:
                    took = time.monotonic() - self._failing_since
                    self._failing_since = None
                    _log(f"forwarding to the collector at {self.target.url} works again (after {took:.0f} s)")
                break
        if conn is not None:
            conn.close()

    def _say_unavailable(self, reason: str, delay: float) -> None:
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = now
        elif now - self._logged_at < LOG_INTERVAL_S:
            return
        self._logged_at = now
        _log(
            f"could not forward a run: {reason}; retrying in {delay:g} s, backing off to {RETRY_MAX_S:g} s "
            f"({self._queue.qsize()} run(s) queued, at most {self._queue.maxsize}; /api/health counts)"
        )

    @staticmethod
    def _request(conn: sqlite3.Connection, run_id: str) -> dict[str, Any]:
        from ..store import reads
        from ..store.readonly import snapshot

        with snapshot(conn):
            run = reads.get_run(conn, run_id)
            if run is None:
                raise ExportError(f"run {run_id!r} was deleted before it could be forwarded")
            events = (strip_secret_keys(s.event)[0] for s in iter_events(conn, run_id))
            return otlp.request([otlp.resource_spans(strip_secret_keys(run)[0], events)])


def _log(message: str) -> None:
    print(f"graphmind: {message}", file=sys.stderr, flush=True)
