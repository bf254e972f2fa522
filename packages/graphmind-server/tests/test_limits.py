"""The bounds on connections that have not shown the token (access/limits.py): per address, overall, the
oldest waiting one goes first, a trusted one never; the deadline; one line per interval."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from graphmind_server.access import limits
from graphmind_server.access.limits import Limiter


class FakeTransport:
    def __init__(self, host: str, port: int) -> None:
        self.peer = (host, port)
        self.aborted = False

    def get_extra_info(self, name: str) -> Any:
        return self.peer if name == "peername" else None

    def abort(self) -> None:
        self.aborted = True


def run(body: Any) -> Any:
    async def main() -> Any:
        return body(Limiter())

    return asyncio.run(main())


def test_a_flood_from_one_address_keeps_at_most_its_bound_and_the_oldest_go_first() -> None:
    def body(limiter: Limiter) -> None:
        flood = [FakeTransport("127.0.0.2", 10_000 + n) for n in range(limits.MAX_PENDING_PER_PEER + 20)]
        for t in flood:
            limiter.opened(t)
        assert [t.aborted for t in flood] == [True] * 20 + [False] * limits.MAX_PENDING_PER_PEER
        holder = FakeTransport("127.0.0.1", 5000)  # another address: untouched by that flood
        limiter.opened(holder)
        limiter.trust(holder.peer)
        for n in range(limits.MAX_PENDING + 50):
            limiter.opened(FakeTransport("127.0.0.1", 20_000 + n))
        assert not holder.aborted  # trusted: never counted, never pushed out
        assert len(limiter.pending) <= limiter.max_pending
        assert limiter.evicted >= 20 + 50

    run(body)


def test_the_overall_bound_takes_from_the_address_holding_the_most() -> None:
    def body(limiter: Limiter) -> None:
        many = [FakeTransport("10.0.0.1", n) for n in range(limits.MAX_PENDING_PER_PEER)]
        few = [FakeTransport(f"10.0.1.{n}", 1) for n in range(limiter.max_pending - len(many))]
        for t in many + few:
            limiter.opened(t)
        limiter.opened(FakeTransport("10.0.2.1", 1))
        assert many[0].aborted and not any(t.aborted for t in few)

    run(body)


def test_a_waiting_connection_is_cut_at_the_deadline_and_a_closed_one_is_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(limits, "HANDSHAKE_TIMEOUT_S", 0.01)

    async def main() -> None:
        limiter = Limiter()
        slow, gone, trusted = (FakeTransport("127.0.0.1", p) for p in (1, 2, 3))
        for t in (slow, gone, trusted):
            limiter.opened(t)
        limiter.closed(gone)  # type: ignore[arg-type]
        limiter.trust(["127.0.0.1", 3])
        while limiter.pending:  # the timer fires on this loop
            await asyncio.sleep(0.01)
        assert slow.aborted and not gone.aborted and not trusted.aborted and limiter.expired == 1

    asyncio.run(main())


def test_failed_accepts_are_one_line_per_interval(capsys: pytest.CaptureFixture[str]) -> None:
    def body(limiter: Limiter) -> None:
        for _ in range(1000):
            limiter.accept_failed(OSError(24, "Too many open files"))

    run(body)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "cannot accept connections" in err[0] and "ulimit -n" in err[0]
