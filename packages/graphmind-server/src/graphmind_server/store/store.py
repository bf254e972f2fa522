"""The store as the event loop sees it: enqueue writes, await commits, read in worker threads."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from . import logline, reads, retention
from .items import Committed, EventItem
from .lock import DbLock
from .ops import Look, Op
from .schema import StoreError, connect, open_database
from .wal_watch import LOST
from .writer import Writer

T = TypeVar("T")

READ_THREADS = 4
LOG_FLUSH_S = 1.0


class Store:
    def __init__(self, path: Path | str, *, port: int | None = None) -> None:
        """Take the database's one-writer lock (store/lock.py), then open (create, migrate) it now,
        so a bad path or a second hub fails before the hub listens. `port`: the hub's, for the lock
        file (a second hub's refusal names it)."""
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the database directory {self.path.parent} ({exc.strerror or exc}); "
                "pass --db or set GRAPHMIND_DB to a writable file"
            ) from None
        self._lock = DbLock(self.path)
        try:
            self._wconn = open_database(self.path)
        except BaseException:
            self._lock.release()
            raise
        self._lock.describe(port)
        self._writer: Writer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_commit: Callable[[Committed], None] | None = None
        self._on_storing: Callable[[str | None], None] | None = None
        self.not_storing: str | None = None  # why the writer cannot store now (store/stall.py)
        self._enqueued = 0
        self._committed = 0
        self._enqueued_bytes = 0
        self._committed_bytes = 0
        self._barriers: list[tuple[int, asyncio.Future[None]]] = []
        self._ops: dict[int, asyncio.Future[Any]] = {}
        self._op_ids = itertools.count(1)
        self._drained: asyncio.Event | None = None
        self._looking = False  # a Look is queued (store/wal_watch.py)
        self.last_cursor = 0
        self._local = threading.local()
        self._read_conns: list[sqlite3.Connection] = []
        self._read_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="graphmind-store-read")

    # -- before start: synchronous, on the starting thread --------------------------------------

    def prune(self, *, keep_runs: int, keep_days: int, now_ms: float) -> retention.Pruned:
        return retention.prune(self._wconn, keep_runs=keep_runs, keep_days=keep_days, now_ms=now_ms)

    def prune_plan(self, *, keep_runs: int, keep_days: int, now_ms: float) -> retention.Plan:
        return retention.plan(self._wconn, keep_runs=keep_runs, keep_days=keep_days, now_ms=now_ms)

    def read_now(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(self._wconn, *args)

    # -- running ------------------------------------------------------------------------------

    def start(
        self,
        loop: asyncio.AbstractEventLoop,
        on_commit: Callable[[Committed], None],
        on_storing: Callable[[str | None], None] | None = None,
        before_transaction: Callable[[], None] | None = None,
    ) -> None:
        """`on_storing(reason)`: the writer cannot store (reason) or stores again (None), on the loop.
        `before_transaction()`: called on the writer thread before each transaction (hub/control_first.py)."""
        self._loop = loop
        self._on_commit = on_commit
        self._on_storing = on_storing
        self._drained = asyncio.Event()
        self._drained.set()
        self._writer = Writer(
            self._wconn,
            self._from_writer,
            path=self.path,
            on_storing=self._storing_from_writer,
            before_transaction=before_transaction,
        )
        self._writer.lazy_index = True  # the index follows in the writer's idle time (store/search.py)
        self.last_cursor = self._writer.last_cursor
        self._writer.start()

    def close(self) -> None:
        """Commit everything queued, stop the writer, close every connection. Blocks."""
        if self._writer is not None:
            self._writer.stop()
            self._wconn = self._writer.conn  # a new one if the WAL was recovered (store/wal_watch.py)
            self._writer = None
        self._executor.shutdown(wait=True)
        with self._read_lock:
            for conn in self._read_conns:
                conn.close()
            self._read_conns.clear()
        self._wconn.close()
        self._lock.release()
        logline.flush(LOG_FLUSH_S)  # the writer's last lines (a stream that takes none costs this bound)

    @property
    def backlog(self) -> int:
        return self._enqueued - self._committed

    @property
    def backlog_bytes(self) -> int:
        """Characters of event text received and not committed yet (the ingest byte budget)."""
        return self._enqueued_bytes - self._committed_bytes

    def put_event(
        self, client_id: str, app: str, event: dict[str, Any], raw: str, ts: float, once: str | None = None
    ) -> None:
        """Queue an app event; with `once`, the writer stores at most one event of its run under
        that key (the database remembers every key, so a retry of any size is stored once)."""
        assert self._writer is not None
        self._enqueued += 1
        self._enqueued_bytes += len(raw)
        self._writer.queue.put(EventItem(client_id, app, event, raw, ts, once))

    @property
    def once_skipped(self) -> dict[str, int]:
        """Events given with `once` that the writer skipped (their key was stored already), by the
        key's first part (before a colon)."""
        return self._writer.once_skipped.copy() if self._writer is not None else {}

    def submit(self, op: Op) -> asyncio.Future[Any]:
        """Queue an operation; the future resolves with its result once committed."""
        assert self._writer is not None and self._loop is not None
        op_id = next(self._op_ids)
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._ops[op_id] = fut
        self._enqueued += 1
        self._writer.queue.put((op_id, op))
        return fut

    async def barrier(self) -> None:
        """Wait until everything queued before this call is committed (read-your-writes). While the
        writer cannot store, reads answer with what is stored instead of waiting for it."""
        target = self._enqueued
        if self._committed >= target or self.not_storing is not None:
            return
        assert self._loop is not None
        fut: asyncio.Future[None] = self._loop.create_future()
        self._barriers.append((target, fut))
        await fut

    async def wait_backlog_below(self, limit: int, limit_bytes: int) -> None:
        assert self._drained is not None
        while self.backlog > limit or self.backlog_bytes > limit_bytes:
            self._drained.clear()
            await self._drained.wait()

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        assert self._loop is not None
        return await self._loop.run_in_executor(self._executor, self._read_sync, fn, args)

    def _read_sync(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        conn = getattr(self._local, "conn", None)
        generation = self._writer.wal_recoveries if self._writer is not None else 0
        if conn is not None and getattr(self._local, "generation", 0) != generation:
            # The writer started a new WAL (store/wal_watch.py): this one may hold the lost file.
            with self._read_lock:
                self._read_conns.remove(conn)
            conn.close()
            conn = None
        if conn is None:
            conn = connect(self.path, readonly=True)
            self._local.conn, self._local.generation = conn, generation
            with self._read_lock:
                self._read_conns.append(conn)
        try:
            return fn(conn, *args)
        except sqlite3.Error:
            if self.wal_lost and self._loop is not None:
                with contextlib.suppress(RuntimeError):
                    self._loop.call_soon_threadsafe(self.look)
            raise

    @property
    def not_storing_now(self) -> str | None:
        """Why the store cannot store (or read) right now, None when it can: what health says."""
        if self.not_storing is not None:
            return self.not_storing
        if self.wal_lost:
            self.look()
            return LOST
        return None

    @property
    def wal_lost(self) -> bool:
        """The WAL file the writer uses is gone from its path (a stat; the writer recovers)."""
        writer = self._writer
        return writer is not None and writer.wal is not None and writer.wal.lost()

    def look(self) -> None:
        """On the loop: ask the writer to look at its files now (it recovers a lost WAL), once."""
        if self._writer is None or self._looking:
            return
        self._looking = True
        self.submit(Look()).add_done_callback(lambda _: setattr(self, "_looking", False))

    # -- commits arrive here, on the loop -------------------------------------------------------

    def _from_writer(self, committed: Committed) -> None:
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
            self._loop.call_soon_threadsafe(self._committed_on_loop, committed)

    def _storing_from_writer(self, reason: str | None) -> None:
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._storing_on_loop, reason)

    def _storing_on_loop(self, reason: str | None) -> None:
        self.not_storing = reason
        if reason is not None:
            for _, fut in self._barriers:  # readers waiting for a commit answer with what is stored
                if not fut.done():
                    fut.set_result(None)
            self._barriers = []
        if self._on_storing is not None:
            self._on_storing(reason)

    def _committed_on_loop(self, c: Committed) -> None:
        self._committed = c.processed
        self._committed_bytes = c.processed_bytes
        self.last_cursor = c.last_cursor
        for op_id, result, exc in c.results:
            fut = self._ops.pop(op_id, None)
            if fut is not None and not fut.done():
                if exc is not None:
                    fut.set_exception(exc)
                else:
                    fut.set_result(result)
        if self._barriers:
            waiting = []
            for target, fut in self._barriers:
                if target <= self._committed:
                    if not fut.done():
                        fut.set_result(None)
                else:
                    waiting.append((target, fut))
            self._barriers = waiting
        if self._drained is not None:
            self._drained.set()
        if self._on_commit is not None:
            self._on_commit(c)


__all__ = ["Store", "reads"]
