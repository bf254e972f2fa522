"""The detached ring's inline drop (`_wire/ring.py`) keeps exactly what the drop-oldest rule says:
at most `buffer_size` entries and about `max_buffer_bytes`, one entry always kept, every loss
counted once (by run, folded into the counter at an attach) — checked against a model of the rule."""

from __future__ import annotations

import random
from collections import Counter, deque
from typing import Any

import graphmind
from graphmind._wire.backpressure import DETACHED
from graphmind._wire.transport import Transport


def _transport(buffer_size: int, max_bytes: int) -> tuple[graphmind.Client, Transport]:
    client = graphmind.Client(
        app="t",
        url="ws://127.0.0.1:9/ingest",
        retry_interval=3600,
        buffer_size=buffer_size,
        max_buffer_bytes=max_bytes,
    )
    client.wrap(lambda: 0, name="warm")()  # starts the transport (detached)
    transport = client._transport
    assert transport is not None
    return client, transport


def _model(events: list[tuple[int, str, int]], n: int, max_bytes: int) -> tuple[list[int], Counter[str]]:
    ring: deque[tuple[int, str, int]] = deque()
    size = 0
    lost: Counter[str] = Counter()
    for event in events:
        ring.append(event)
        size += event[2]
        while len(ring) > n or (size > max_bytes and len(ring) > 1):
            _seq, run, s = ring.popleft()
            size -= s
            lost[run] += 1
    return [e[0] for e in ring], lost


def test_the_inline_drop_matches_the_rule_for_random_sizes_and_runs() -> None:
    rnd = random.Random(37)
    for trial in range(40):
        n = rnd.choice([1, 2, 3, 10, 50])
        max_bytes = rnd.choice([10**9, 500, 2_000])
        client, transport = _transport(n, max_bytes)
        before = transport.dropped_count
        base = len(transport._ring)
        # the model starts from what the warm-up left in the ring: (seq, runId, size)
        warm = [(entry[3], entry[2], entry[1]) for entry in transport._ring]
        events = []
        for i in range(300):
            run = rnd.choice(["r1", "r1", "r1", "r2", "r3"])
            size = rnd.choice([10, 40, 100, 900, 5_000]) if max_bytes < 10**9 else 40
            events.append((10_000 + i, run, size))
        for seq, run, size in events:
            transport.enqueue({"type": "node.finished", "runId": run, "seq": seq}, size)
        kept, lost = _model(warm + events, n, max_bytes)
        assert [entry[3] for entry in transport._ring] == kept, trial
        assert sum(lost.values()) == base + 300 - len(kept)
        assert len(transport._ring) <= n
        assert transport._ring_bytes == sum(entry[1] for entry in transport._ring)
        assert transport._unsent == len(transport._ring)  # never attached: all unsent
        assert transport._unsent_bytes == transport._ring_bytes
        assert transport.dropped_count - before == 300 + base - len(transport._ring)
        assert client.stats()["dropped"] == transport.dropped_count
        client.dispose()


def test_a_lone_entry_over_the_byte_budget_is_kept() -> None:
    client, transport = _transport(10, 100)
    with transport._cond:  # an empty ring: the new entry is the only one
        transport._ring.clear()
        transport._ring_bytes = transport._unsent = transport._unsent_bytes = 0
    transport.enqueue({"type": "node.finished", "runId": "r", "seq": 10_001}, 5_000)
    assert [entry[3] for entry in transport._ring] == [10_001]
    transport.enqueue({"type": "node.finished", "runId": "r", "seq": 10_002}, 5_000)
    assert [entry[3] for entry in transport._ring] == [10_002]
    client.dispose()


def test_a_ring_left_over_full_is_trimmed_to_its_bound_by_the_next_detached_event() -> None:
    client, transport = _transport(5, 10**9)
    warm = len(transport._ring)
    with transport._cond:  # as an attached hub leaves it: more than buffer_size entries, all unsent
        for seq in range(10_000, 10_012):
            transport._ring.append([{"seq": seq}, 10, "r", seq])
            transport._ring_bytes += 10
            transport._unsent += 1
            transport._unsent_bytes += 10
    before = transport.dropped_count
    transport.enqueue({"type": "node.finished", "runId": "r", "seq": 10_012}, 10)
    assert [entry[3] for entry in transport._ring] == list(range(10_008, 10_013))
    assert transport.dropped_count - before == warm + 13 - 5
    assert transport._unsent == 5 and transport._ring_bytes == 50
    client.dispose()


def test_losses_are_counted_once_across_an_attach_fold() -> None:
    client, transport = _transport(3, 10**9)
    for seq in range(10_000, 10_010):
        transport.enqueue({"type": "node.finished", "runId": "r1" if seq < 10_005 else "r2", "seq": seq}, 10)
    total = transport.dropped_count
    by_reason: dict[str, Any] = transport.lost_by_reason()
    assert by_reason[DETACHED] == total
    with transport._cond:
        transport._fold_detached()  # what an attach does first
        assert transport._dropped_total() == total
    assert transport.lost_by_reason()[DETACHED] == total
    assert client.stats()["dropped"] == total
    client.dispose()
