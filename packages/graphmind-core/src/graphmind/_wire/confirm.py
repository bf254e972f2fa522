"""Sent events the hub has not confirmed storing: what makes "stored + counted = sent" exact.

An event written to the socket is not stored yet: a hub killed a moment later loses what was in
its queue. The ring keeps sent events for replay, so most such losses are healed on the next
attach; but an event that leaves the ring (it is full, an outage is long) before any hub confirmed
it used to be neither stored nor counted. Now each one is kept here as its seq (run-length
encoded, a few ints per streak of one run's events) until a hub that advertises the `stored`
capability answers a `stored.query` for it (docs/protocol.md, "Confirming what was stored"): the
hub answers only after committing everything it received before the question, so a seq it names
as missing is lost for good and counted (reason `hub_lost`). At close, what no hub answered for in
time is counted apart, in `stats()["unconfirmed"]`, and said as "not confirmed", never as lost: a
busy hub that is still committing a large backlog has most likely stored it (100,100 events sent,
all stored, 2,002 of them unconfirmed at close used to be reported as "never reached the hub").

Nothing here runs for an app that never reached such a hub, and an attached app pays one type
check per event leaving the ring, plus one extended segment (`add`).
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from typing import Any

from .. import protocol as proto

HUB_LOST = "hub_lost"  # the hub took it and then lost it (killed before its commit)
ASK_EVERY_S = 0.5  # at most one question in flight, and this long between two
ASK_SEGMENTS = 1024  # …or sooner once this many segments wait


class Unconfirmed:
    """Segments `[first_seq, last_seq, runId]` of sent events that left the ring unconfirmed.
    Used under the transport's lock; never raises into it."""

    def __init__(self) -> None:
        self._segments: list[list[Any]] = []
        self._asked: list[list[Any]] = []  # the segments of the question in flight
        self._asked_id: int | None = None
        self._ids = itertools.count(1)
        self._last_ask = 0.0

    def __len__(self) -> int:
        return len(self._segments) + len(self._asked)

    def add(self, seq: Any, run_id: Any) -> None:
        if type(seq) is not int:
            return  # no seq: nothing a hub could be asked about (not an SDK event)
        segments = self._segments
        if segments:
            last = segments[-1]
            if last[1] + 1 == seq and last[2] == run_id:
                last[1] = seq
                return
        segments.append([seq, seq, run_id])

    def question(self, now: float, *, final: bool = False) -> dict[str, Any] | None:
        """The `stored.query` to send now, or None (one in flight, nothing waiting, too soon)."""
        if self._asked_id is not None or not self._segments:
            return None
        if not final and now - self._last_ask < ASK_EVERY_S and len(self._segments) < ASK_SEGMENTS:
            return None
        segments = self._segments[: proto.MAX_QUERY_RANGES]
        self._segments = self._segments[len(segments) :]
        self._asked, self._asked_id, self._last_ask = segments, next(self._ids), now
        return proto.stored_query(self._asked_id, _ranges(segments))

    @property
    def waiting_answer(self) -> bool:
        return self._asked_id is not None

    def answer(self, frame: dict[str, Any]) -> Counter[str] | None:
        """The events lost per run that a `stored.answer` names; None when it answers no question
        of ours (another connection's, or malformed: then the question stays open)."""
        if frame.get("id") != self._asked_id or self._asked_id is None:
            return None
        missing = frame.get("missing")
        if not isinstance(missing, list):
            return None
        ranges: list[tuple[int, int]] = []
        for pair in missing:
            if (
                isinstance(pair, list)
                and len(pair) == 2
                and all(type(v) is int for v in pair)
                and pair[0] <= pair[1]
            ):
                ranges.append((pair[0], pair[1]))
        lost: Counter[str] = Counter()
        for first, last, run_id in self._asked:
            for lo, hi in ranges:
                n = min(last, hi) - max(first, lo) + 1
                if n > 0:
                    lost[run_id if type(run_id) is str else ""] += n
        self._asked, self._asked_id = [], None
        return lost

    def unanswered(self) -> None:
        """The connection went with a question open: ask again on the next one."""
        if self._asked_id is not None:
            self._segments[:0] = self._asked
            self._asked, self._asked_id = [], None

    def give_up(self) -> Counter[str]:
        """At close: every event no hub answered for, per run (counted `unconfirmed`)."""
        self.unanswered()
        lost: Counter[str] = Counter()
        for first, last, run_id in self._segments:
            lost[run_id if type(run_id) is str else ""] += last - first + 1
        self._segments = []
        return lost


def _ranges(segments: list[list[Any]]) -> list[list[int]]:
    """Segments as wire ranges: neighbours of other runs merge (one client's seqs are dense)."""
    out: list[list[int]] = []
    for first, last, _ in sorted(segments, key=lambda s: s[0]):
        if out and out[-1][1] + 1 >= first:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return out


class Confirming:
    """The transport's side of confirmations (a mixin of `Transport`: its lock guards all of this)."""

    _cond: Any
    _ring: Any
    _control: list[str]
    _unsent: int
    _writer_idle: bool
    attached: bool
    counters: dict[str, int]
    _encode_frame: Any

    def count_lost(self, run_id: str, reason: str, n: int = 1) -> None:  # pragma: no cover - Backpressure's
        raise NotImplementedError

    def _init_confirming(self) -> None:
        self._unconfirmed = Unconfirmed()
        self._confirming = False  # the hub of the last connection answers `stored.query`

    def _question(self, now: float) -> str | None:
        """The encoded `stored.query` the write loop sends now, if one is due (under the lock)."""
        if not self._confirming or not self.attached:
            return None
        query = self._unconfirmed.question(now)
        return None if query is None else self._encode_frame(query)

    def _stored_answer(self, frame: dict[str, Any]) -> None:
        """A `stored.answer` from the hub (the reader thread): what it lost is counted."""
        with self._cond:
            lost = self._unconfirmed.answer(frame)
            if lost is not None:
                self._count_confirmed_lost(lost, HUB_LOST)
            self._cond.notify_all()

    def _count_confirmed_lost(self, lost: Counter[str], reason: str) -> None:
        for run_id, n in lost.items():
            self.count_lost(run_id, reason, n)
            self.counters["dropped"] += n

    def _confirm_before_close(self, timeout: float) -> None:
        """Asks about every sent event not confirmed yet, the ring's too, and waits for the answers
        (at most `timeout`), so that a hub that lost the last ones says so before the app exits."""
        deadline = time.monotonic() + timeout
        with self._cond:
            if not (self._confirming and self.attached):
                return
            ring = self._ring
            for i in range(len(ring) - self._unsent):  # the sent part (the rest counts as unsent)
                entry = ring[i]
                if type(entry[0]) is str:
                    self._unconfirmed.add(entry[3], entry[2])
            while len(self._unconfirmed) and self.attached:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                if not self._unconfirmed.waiting_answer:
                    query = self._unconfirmed.question(time.monotonic(), final=True)
                    if query is None:
                        return
                    self._control.append(self._encode_frame(query))
                    self._writer_idle = False
                    self._cond.notify_all()
                self._cond.wait(min(remaining, 0.05))

    def _settle_at_close(self) -> None:
        """After the connection closed: what no hub answered for is counted as unconfirmed, not as
        lost (under the lock): it was sent, and the hub may well have stored it."""
        self.counters["unconfirmed"] += sum(self._unconfirmed.give_up().values())
