"""The one writer: a thread that owns the write connection and commits in batches.

Everything that changes the database goes through its queue, in order: app events and the hub's
own operations (settings, abandon, delete). A transaction takes whatever is queued, up to
BATCH_MAX items; the writer never waits to fill a batch, so an idle hub commits an event within
about a millisecond and a busy one writes hundreds per transaction.
"""

from __future__ import annotations

import contextlib
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import derive, rows, search
from .derive import RunRow
from .items import Committed, EventItem
from .logline import say
from .stall import Stall, cannot_store
from .wal_watch import WalWatch

BATCH_MAX = 500
BATCH_MAX_BYTES = 8 * 1024 * 1024  # a transaction also stops at this much event text (big events)
RUN_CACHE_MAX = 2000

_STOP = object()


def _size(item: Any) -> int:
    return len(item.raw) if type(item) is EventItem else 0


class Writer:
    def __init__(
        self,
        conn: sqlite3.Connection,
        notify: Callable[[Committed], None],
        *,
        path: Path | None = None,
        on_storing: Callable[[str | None], None] | None = None,
        before_transaction: Callable[[], None] | None = None,
    ) -> None:
        self.conn = conn
        self._before_transaction = before_transaction  # the hub's answer-first wait (hub/control_first.py)
        self._notify = notify
        # The hub's writer watches its file (a db deleted or replaced under it) and says when it
        # cannot store (store/stall.py); `graphmind import` passes neither.
        self._stall = Stall(path, on_storing) if path is not None else None
        self.wal = WalWatch(path) if path is not None else None  # store/wal_watch.py
        self.wal_recoveries = 0  # the read connections reopen when this moves
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.runs: dict[str, RunRow] = {}
        self._hwm: dict[str, int] = {}  # highest seq stored per client: the dedupe fast path
        # Events whose `once` key was stored already (EventItem.once), by the key's first part.
        self.once_skipped: dict[str, int] = {}  # a plain dict: the loop reads a copy()
        self._processed = 0
        self._processed_bytes = 0
        row = conn.execute(
            "SELECT MAX(COALESCE((SELECT MAX(cursor) FROM events), 0),"
            " COALESCE((SELECT CAST(value AS INTEGER) FROM settings WHERE key = 'cursor'), 0))"
        ).fetchone()
        self.last_cursor: int = row[0] or 0
        self._on_storing = on_storing
        self._thread = threading.Thread(target=self._run, name="graphmind-store-writer", daemon=True)
        self._failures = 0
        # `graphmind import` writes the whole file in one outer transaction: each batch is then a
        # savepoint inside it, so a failure anywhere leaves the database as it was.
        self.nested = False
        # The hub's writer indexes in its idle time; one without a thread (import) in each batch.
        self.lazy_index = False
        self.index_failed = False
        self.indexed = search.indexed_cursor(conn, self.last_cursor)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Commit everything queued so far, then end the thread (a writer that cannot store tries
        once more and then reports what it could not write)."""
        if self._stall is not None:
            self._stall.stopping = True
            self._stall.wake()
        self.queue.put(_STOP)
        self._thread.join()

    # -- the thread ---------------------------------------------------------------------------

    def _run(self) -> None:
        """The thread. Should anything ever end it early, health says so: before, a writer killed
        by a log line it could not write left `/api/health` saying "storing" while nothing was."""
        try:
            self._loop()
        except BaseException as exc:
            what = f"the hub's writer stopped ({type(exc).__name__}: {exc}); restart the hub"
            say(f"graphmind: {what}: nothing more is stored until then")
            if self._on_storing is not None:
                self._on_storing(what)

    def _loop(self) -> None:
        while True:
            # The search index follows in the writer's idle time (store/search.py): a burst of
            # events costs it nothing until the burst is over; a search asks for the rest.
            while self.lazy_index and search.index_idle(self):
                pass
            batch = [self.queue.get()]
            size = _size(batch[0])
            while len(batch) < BATCH_MAX and size < BATCH_MAX_BYTES:
                try:
                    item = self.queue.get_nowait()
                except queue.Empty:
                    break
                batch.append(item)
                size += _size(item)
            stop = any(item is _STOP for item in batch)
            if self._before_transaction is not None:
                self._before_transaction()
            self._processed_bytes += size
            self._commit([item for item in batch if item is not _STOP], len(batch))
            if stop:
                return

    def _commit(self, batch: list[Any], consumed: int) -> None:
        try:
            out = self._stalled_transaction(batch)
        except Exception as exc:  # a failed batch must never end the writer thread
            out = Committed(processed=0)
            # One bad item (a value SQLite cannot bind, say) must not cost the others: write them
            # one transaction each and drop only what fails on its own.
            for item in batch if len(batch) > 1 else []:
                try:
                    one = self._transaction([item])
                except Exception as item_exc:
                    self._report(item_exc, item)
                    if isinstance(item, tuple):
                        out.results.append((item[0], None, item_exc))
                    continue
                out.events += one.events
                out.runs += one.runs
                out.deleted += one.deleted
                out.results += one.results
            if len(batch) == 1:
                self._report(exc, batch[0])
                if isinstance(batch[0], tuple):
                    out.results.append((batch[0][0], None, exc))
        self._processed += consumed
        out.processed = self._processed
        out.processed_bytes = self._processed_bytes
        out.last_cursor = self.last_cursor
        self._notify(out)

    def _stalled_transaction(self, batch: list[Any]) -> Committed:
        """The batch's transaction; while the database cannot store (disk full, I/O error, the
        file gone) the same batch is tried again, with a backoff, until it can: nothing queued is
        dropped, the queue waits, and ingest stops reading once it is long (store/stall.py)."""
        stall = self._stall
        if stall is None:
            return self._transaction(batch)
        while True:
            try:
                stall.check_file()
                if self.wal is not None and self.wal.lost():
                    self.conn = self.wal.recover(self.conn)
                    self.wal_recoveries += 1
                out = self._transaction(batch)
            except Exception as exc:
                reason = cannot_store(exc)
                if reason is None:
                    raise  # this batch's own fault: split and dropped item by item (_commit)
                if not stall.failed(reason, sum(1 for item in batch if type(item) is EventItem)):
                    raise
                continue
            stall.stored()
            return out

    def _transaction(self, batch: list[Any]) -> Committed:
        out = Committed(processed=0)
        self._rows: list[tuple[Any, ...]] = []
        self._touched: dict[str, RunRow] = {}
        self._out = out
        cursor_before = self.last_cursor
        begin, commit = ("SAVEPOINT batch", "RELEASE batch") if self.nested else ("BEGIN IMMEDIATE", "COMMIT")
        try:
            self.conn.execute(begin)
            for item in batch:
                if isinstance(item, tuple):  # (op_id, Op)
                    self._flush_rows()
                    op_id, op = item
                    try:
                        out.results.append((op_id, op.apply(self), None))
                    except sqlite3.Error:
                        raise
                    except Exception as exc:
                        out.results.append((op_id, None, exc))
                else:
                    self._event(item)
            self._flush_rows()
            if not self.lazy_index:
                self.index_now()
            self._write_runs()
            if self.last_cursor != cursor_before:
                self.conn.execute(
                    "INSERT INTO settings (key, value) VALUES ('cursor', ?)"
                    " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (str(self.last_cursor),),
                )
            self.conn.execute(commit)
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK TO batch" if self.nested else "ROLLBACK")
            # The cached rows and seq marks may describe what was rolled back: reload them.
            self.runs.clear()
            self._hwm.clear()
            self.last_cursor = cursor_before
            self.indexed = min(self.indexed, cursor_before)
            raise
        out.runs = [(run.cursor, run.to_api()) for run in self._touched.values() if run.id in self.runs]
        self._trim_cache()
        return out

    def index_now(self, limit: int | None = None) -> None:
        """Index the stored events not indexed yet (up to `limit`), inside the open transaction."""
        search.catch_up(self, limit)

    def write_now(self, items: list[EventItem]) -> int:
        """Store events in one transaction on the calling thread, for a writer whose thread is not
        started (`graphmind import`); returns how many were new. Raises what the transaction raised."""
        return len(self._transaction(list(items)).events)

    def _report(self, exc: Exception, item: Any) -> None:
        self._failures += 1
        if self._failures <= 3 or self._failures % 1000 == 0:
            what = (
                f"an event from client {item.client_id}" if isinstance(item, EventItem) else "a hub operation"
            )
            say(
                f"graphmind: could not store {what} ({type(exc).__name__}: {exc}); "
                f"{self._failures} item(s) dropped so far"
            )

    # -- events -------------------------------------------------------------------------------

    def _is_new(self, client_id: str, seq: int) -> bool:
        hwm = self._hwm.get(client_id)
        if hwm is None:
            row = self.conn.execute(
                "SELECT MAX(seq) FROM events WHERE client_id = ?", (client_id,)
            ).fetchone()
            hwm = row[0] if row[0] is not None else -1
        if seq > hwm:
            self._hwm[client_id] = seq
            return True
        self._hwm[client_id] = hwm
        # Below the mark: a replay, or an event that arrived out of order. Ask the table (and the
        # rows of this batch, not inserted yet).
        self._flush_rows()
        found = self.conn.execute(
            "SELECT 1 FROM events WHERE client_id = ? AND seq = ?", (client_id, seq)
        ).fetchone()
        return found is None

    def _event(self, item: EventItem) -> None:
        ev = item.event
        if not self._is_new(item.client_id, ev["seq"]):
            return
        run_id = ev["runId"]
        if item.once is not None and not self._first_of(run_id, item.once):
            part = item.once.partition(":")[0]
            self.once_skipped[part] = self.once_skipped.get(part, 0) + 1
            return
        run = self.runs.get(run_id) or self.run_or_new(run_id, item.app, item.client_id, item.ts)
        self.last_cursor += 1
        cursor = self.last_cursor
        self._rows.append((cursor, run_id, item.client_id, ev["seq"], ev["type"], item.raw))
        derive.apply(run, ev, item.ts)
        run.cursor = cursor
        self._touched[run_id] = run
        self._out.events.append((cursor, run_id, item.raw))

    def _first_of(self, run_id: str, key: str) -> bool:
        """Whether `key` is new for this run (and now taken): the table is in this transaction, so
        it sees this batch's keys too, and a failed transaction forgets them with its events."""
        cur = self.conn.execute("INSERT OR IGNORE INTO once_keys (run_id, key) VALUES (?, ?)", (run_id, key))
        return cur.rowcount > 0

    def _flush_rows(self) -> None:
        if self._rows:
            self.conn.executemany(
                "INSERT INTO events (cursor, run_id, client_id, seq, type, body) VALUES (?,?,?,?,?,?)",
                self._rows,
            )
            self._rows = []

    # -- runs ---------------------------------------------------------------------------------

    def run(self, run_id: str) -> RunRow | None:
        """The cached row of a run, loaded (with its nodes) on first use; None if unknown."""
        run = self.runs.get(run_id)
        if run is not None:
            return run
        run = rows.load_run(self.conn, run_id)
        if run is None:
            return None
        self.runs[run_id] = run
        return run

    def run_or_new(self, run_id: str, app: str, client_id: str, ts: float) -> RunRow:
        """The run's row; a new running one when the hub has none yet."""
        run = self.run(run_id)
        if run is None:
            run = RunRow(
                id=run_id,
                app=app,
                name=run_id,
                status="running",
                started_at=ts,
                client_id=client_id,
                received_at=time.time() * 1000.0,
                nodes={},
                new=True,
            )
            self.runs[run_id] = run
        return run

    def touch(self, run: RunRow) -> None:
        """An operation changed a run outside of an event: give the change its own cursor."""
        self.last_cursor += 1
        run.cursor = self.last_cursor
        self._touched[run.id] = run

    def forget(self, run_id: str) -> None:
        self.runs.pop(run_id, None)
        self._touched.pop(run_id, None)
        self._out.deleted.append(run_id)

    def _write_runs(self) -> None:
        if self._touched:
            rows.write_runs(self.conn, self._touched.values())

    def _trim_cache(self) -> None:
        if len(self.runs) > RUN_CACHE_MAX:
            for run_id in list(self.runs)[: len(self.runs) - RUN_CACHE_MAX // 2]:
                del self.runs[run_id]
