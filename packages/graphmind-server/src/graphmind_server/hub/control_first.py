"""The control path ahead of bulk ingest: while a person's answer to a gate is on its way (POST
/api/gates/{id} -> gate.resolve -> the app's exec.resumed -> 200), every other app's ingest waits
before its next frame or its next few batch entries, and the store writer waits before its next
transaction (issue 37; docs/performance.md, "A gate answered under load").

Why: one event loop serves every app's WebSocket and the API, and asyncio runs whatever is ready in
turn; a busy app's ingest task takes every frame already queued on its connection without yielding
(a queued `receive()` returns at once), and the writer thread holds the GIL for its Python part of
each transaction. A gate answered while 8 apps send 2,000 events/s each waited behind both (p99
~1 s on the loaded 2-core machine). An answer is rare and short (a few ms), so bulk frames waiting
that long costs nothing measurable, and never longer than MAX_WAIT_S.

A held gate coming in takes the same way (`coming` / `taken`, from ingest/lane.py): from the moment
its frame is read from the app's socket until its ingest task handled it, bulk work waits the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

# A stuck answer (an app that never confirms: GATE_CONFIRM_S is 5 s) must not stall ingest: a bulk
# connection waits at most this long per answer, then goes on as usual until the answer is done.
MAX_WAIT_S = 0.1
# Batch entries a bulk ingest task takes between two looks at whether an answer is on its way
# (an entry costs ~10-30 µs: a look every ~1-2 ms of loop time).
ENTRIES_PER_LOOK = 64


class ControlFirst:
    """Which connections carry an answer now, and the two waits that keep bulk work behind them."""

    def __init__(self) -> None:
        self.answering: dict[Any, int] = {}  # AppConnection -> answers (and gates coming) on their way
        self.incoming: dict[Any, int] = {}  # AppConnection -> frames holding a gate, read, not handled yet
        self._waited_out: set[Any] = set()  # connections that waited MAX_WAIT_S for these answers
        self._clear = asyncio.Event()  # set while no answer is on its way (the loop's side)
        self._clear.set()
        self.clear = threading.Event()  # the same, for the writer thread
        self.clear.set()

    @contextlib.contextmanager
    def answer(self, conn: Any) -> Iterator[None]:
        """Around one answer's round trip: `conn` is the app being answered (it is never held back)."""
        self._begin(conn)
        try:
            yield
        finally:
            self._end(conn)

    def coming(self, conn: Any) -> None:
        """A frame holding a held gate was read from `conn`'s socket (ingest/lane.py): bulk work
        waits as for an answer until `taken` (or `forget`, the connection gone)."""
        self.incoming[conn] = self.incoming.get(conn, 0) + 1
        self._begin(conn)

    def taken(self, conn: Any) -> None:
        """That frame was handled: its gate is in the hub."""
        left = self.incoming.pop(conn, 0) - 1
        if left < 0:
            return
        if left:
            self.incoming[conn] = left
        self._end(conn)

    def forget(self, conn: Any) -> None:
        """`conn` closed: the gate frames read from it and not handled will never be."""
        for _ in range(self.incoming.pop(conn, 0)):
            self._end(conn)

    def _begin(self, conn: Any) -> None:
        self.answering[conn] = self.answering.get(conn, 0) + 1
        self._clear.clear()
        self.clear.clear()

    def _end(self, conn: Any) -> None:
        left = self.answering.pop(conn) - 1
        if left:
            self.answering[conn] = left
        if not self.answering:
            self._waited_out.clear()
            self._clear.set()
            self.clear.set()

    def holds_back(self, conn: Any) -> bool:
        """Whether `conn`'s bulk frames should wait now (an answer to another app is on its way)."""
        return bool(self.answering) and conn not in self.answering and conn not in self._waited_out

    async def wait(self, conn: Any) -> None:
        """Waits while an answer to another app is on its way, at most MAX_WAIT_S in all."""
        if self.holds_back(conn):
            try:
                await asyncio.wait_for(self._clear.wait(), MAX_WAIT_S)
            except asyncio.TimeoutError:
                if self.answering:
                    self._waited_out.add(conn)

    def writer_wait(self) -> None:
        """The store writer, before a transaction: let an answer's round trip have the GIL first
        (at most MAX_WAIT_S per transaction; an idle hub's answer costs this one Event check)."""
        self.clear.wait(MAX_WAIT_S)
