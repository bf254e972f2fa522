"""After a big prune the search index is cleared of what it deleted, in steps between the apps' new
events (store/index_merge.py): FTS5's incremental merge alone kept the delete entries, and every
query for a common word walked them (2.0 s instead of 64 ms after half of a year of runs went)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from types import SimpleNamespace

from graphmind_server.store import index_merge, schema
from graphmind_server.store.ops import MergeIndex

WORDS = [
    "the",
    "customer",
    "asked",
    "about",
    "an",
    "invoice",
    "shipping",
    "delay",
    "order",
    "status",
    "account",
    "password",
    "reset",
]


def _index(tmp_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "index.db", isolation_level=None)
    create = next(s for s in schema.MIGRATIONS[3] if isinstance(s, str) and "VIRTUAL TABLE search" in s)
    conn.execute(create)  # the hub's own index
    return conn


def _add(conn: sqlite3.Connection, rng: random.Random, first: int, rows: int) -> None:
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO search (rowid, body, run_id) VALUES (?, ?, ?)",
        [
            (i, " ".join(rng.choice(WORDS) for _ in range(40)) + " refund", f"r{i // 100}")
            for i in range(first, first + rows)
        ],
    )
    conn.execute("COMMIT")


def _size(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT SUM(LENGTH(block)) FROM search_data").fetchone()[0])


def test_the_merge_after_a_prune_drops_the_deleted_rows_while_rows_keep_coming(tmp_path: Path) -> None:
    conn = _index(tmp_path)
    rng = random.Random(1)
    for first in range(1, 16_001, 500):  # one writer transaction per batch: a segment each
        _add(conn, rng, first, 500)
    stored = _size(conn)
    for first in range(1, 8_001, 250):  # the prune: half of it, a chunk per transaction
        conn.execute("BEGIN")
        conn.execute("DELETE FROM search WHERE rowid BETWEEN ? AND ?", (first, first + 249))
        conn.execute("COMMIT")
    assert _size(conn) > stored  # FTS5 deletes by adding entries
    old = index_merge.segments(conn)
    assert old is not None and len(old) > 1

    op, writer, steps, next_row = MergeIndex(), SimpleNamespace(conn=conn), 0, 16_001
    while steps < 1000:
        conn.execute("BEGIN")
        more = op.apply(writer)  # type: ignore[arg-type]
        conn.execute("COMMIT")
        steps += 1
        _add(conn, rng, next_row, 100)  # the apps' events between two steps
        next_row += 100
        if not more:
            break
    assert steps < 1000
    # Half of the rows gone, half of the index gone: the delete entries went with what they deleted.
    assert _size(conn) < stored * 0.65
    segments = index_merge.segments(conn)
    assert segments is not None and not segments & old
    assert (
        conn.execute("SELECT COUNT(*) FROM search WHERE search MATCH 'refund'").fetchone()[0]
        == 8_000 + 100 * steps
    )
    conn.close()


def test_the_structure_record_is_read_or_left_alone(tmp_path: Path) -> None:
    conn = _index(tmp_path)
    assert index_merge.segments(conn) == set()  # an empty index: no segment
    _add(conn, random.Random(2), 1, 10)
    segments = index_merge.segments(conn)
    assert segments is not None and [segid for segid, _ in segments] == [1]
    conn.execute("UPDATE search_data SET block = x'00000000ff' WHERE id = 10")  # a layout it cannot read
    assert index_merge.segments(conn) is None
    conn.close()
