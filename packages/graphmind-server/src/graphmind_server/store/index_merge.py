"""Clearing the search index of what a big prune deleted, in bounded steps on the writer.

FTS5 deletes a row by writing delete entries beside the ones they cancel; they are dropped only when
a merge writes the index's oldest segment. The incremental `merge` (a positive page count) merges
within a level and keeps them, so after half of a year of runs was pruned every query walked the
dead entries: the runs list's `q=` for a word in every event took 2.0 s instead of 64 ms
(bench/year_of_runs.py). `optimize` drops them but rewrites the whole index in one statement, the
writer held for minutes at millions of events.

So: one `merge` with a negative page count first (it puts every segment on one level and starts
merging them all into one, the oldest: FTS5's `optimize`, begun but bounded), then positive ones,
which go on with a merge already started. A negative one each time would start over whenever the
apps' new rows added a segment meanwhile, and never finish under ingest. The work is done when no
segment of the index as it was at the start is left (the merge's output is a new segment). SQLite
3.42's `secure-delete` and 3.43's contentless-delete tables would avoid the dead entries, but the
hub runs on older SQLite too.
"""

from __future__ import annotations

import sqlite3

_STRUCTURE_ROWID = 10  # FTS5's structure record in `search_data` (fts5_index.c FTS5_STRUCTURE_ROWID)
_STRUCTURE_V2 = b"\xff\x00\x00\x01"  # after the cookie: the layout of SQLite 3.43+ with tombstones


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint (big-endian, 7 bits a byte, the ninth byte whole): (value, next offset)."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def segments(conn: sqlite3.Connection) -> set[tuple[int, int]] | None:
    """The index's segments (its b-trees), each as (its id, its last page): FTS5 reuses the id of a
    segment merged away, the last page tells the new one from the old. None if the structure record
    is not one this reads (a future FTS5): then the steps fall back to positive merges until there
    is nothing to do."""
    row = conn.execute("SELECT block FROM search_data WHERE id = ?", (_STRUCTURE_ROWID,)).fetchone()
    if row is None or not isinstance(row[0], bytes):
        return None
    data: bytes = row[0]
    try:
        at = 4  # the cookie
        v2 = data[at : at + 4] == _STRUCTURE_V2
        if v2:
            at += 4
        levels, at = _varint(data, at)
        total, at = _varint(data, at)
        _, at = _varint(data, at)  # the write counter
        ids: set[tuple[int, int]] = set()
        for _ in range(levels):
            _, at = _varint(data, at)  # segments being merged
            count, at = _varint(data, at)
            for _ in range(count):
                segid, at = _varint(data, at)
                _, at = _varint(data, at)  # its first page (a merge moves it on)
                last, at = _varint(data, at)
                for _ in range(5 if v2 else 0):  # origins, tombstone pages and entries, entries
                    _, at = _varint(data, at)
                ids.add((segid, last))
    except IndexError:
        return None
    return ids if len(ids) == total and at == len(data) else None


class Merge:
    """The merge after a big prune, one `step` per writer transaction; `step` returns True while
    there is more to do."""

    def __init__(self, pages: int = 200) -> None:
        self.pages = pages  # ~4 KB each: a step writes ~0.8 MB, tens of ms of the writer's time
        self.old: set[tuple[int, int]] | None = None  # the segments to merge away, read at the first step
        self.started = False

    def step(self, conn: sqlite3.Connection) -> bool:
        if not self.started:
            self.started = True
            self.old = segments(conn)
            if self.old is not None and len(self.old) < 2:
                return False  # one segment: the deletes are in it already, nothing left to drop
            pages = -self.pages if self.old is not None else self.pages
        else:
            pages = self.pages
        before = conn.total_changes
        conn.execute("INSERT INTO search (search, rank) VALUES ('merge', ?)", (pages,))
        worked = conn.total_changes - before > 1  # FTS5's own sign of work done (its docs)
        if self.old is None:
            return worked
        now = segments(conn)
        return worked and now is not None and bool(self.old & now)
