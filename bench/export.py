"""Benchmark runs leaving the hub: record (JSONL, OTLP), import, and MCP event pages, per event.

    uv run python bench/export.py [--events 50000]

Builds one run of N events (tool calls with nested inputs, one secret key each) through the hub's
own writer on a temporary database, then times, in this process (no interpreter start-up):
`graphmind record --format jsonl` and `--format otlp` (secret stripping on), `graphmind import`
into a fresh file and again (a no-op), and reading the whole run through the MCP `get_events`
function in 40,000-character pages.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from graphmind_server.cli import main
from graphmind_server.export.source import open_readonly
from graphmind_server.mcp_server.reads import Links, get_events
from graphmind_server.store.items import EventItem
from graphmind_server.store.schema import open_database
from graphmind_server.store.writer import Writer


def build(db: Path, events: int) -> None:
    conn = open_database(db)
    writer = Writer(conn, lambda committed: None)
    items = []
    for seq in range(1, events + 1):
        ev = {
            "type": "node.started",
            "seq": seq,
            "ts": 1.7e12 + seq,
            "runId": "bench",
            "nodeId": "tool:fetch",
            "instanceId": f"c{seq}",
            "kind": "tool",
            "name": "fetch",
            "parentInstanceId": "bench",
            "input": {
                "url": f"https://example.test/{seq}",
                "headers": {"Authorization": "Bearer x"},
                "body": {"query": "weather in Lisbon", "page": seq % 7},
            },
        }
        items.append(EventItem("bench-client", "bench", ev, json.dumps(ev, separators=(",", ":")), ev["ts"]))
        if len(items) == 5000:
            writer.write_now(items)
            items = []
    if items:
        writer.write_now(items)
    conn.close()


def timed(label: str, events: int, fn: Callable[[], object]) -> None:
    t0 = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):
        fn()
    s = time.perf_counter() - t0
    print(f"{label:<34} {s:7.2f} s  {s / events * 1e6:7.1f} µs/event  {events / s:9.0f} events/s")


def pages(db: Path) -> int:
    conn = open_readonly(db)
    after, count = 0, 0
    while True:
        page = json.loads(
            get_events(conn, Links(4747), "bench", after=after, limit=5000, budget=40_000, types=None)
        )
        count += 1
        if page["next"] is None:
            return count
        after = page["next"]


def run(events: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db, out, fresh = Path(tmp) / "hub.db", Path(tmp) / "run.jsonl", Path(tmp) / "fresh.db"
        build(db, events)
        print(f"one run, {events} events, {db.stat().st_size / 1e6:.1f} MB database")
        timed("record --format jsonl", events, lambda: main(["record", "--db", str(db), "--out", str(out)]))
        timed(
            "record --format otlp",
            events,
            lambda: main(["record", "--db", str(db), "--format", "otlp", "--out", str(Path(tmp) / "t.json")]),
        )
        timed("import (fresh database)", events, lambda: main(["import", str(out), "--db", str(fresh)]))
        timed("import again (no-op)", events, lambda: main(["import", str(out), "--db", str(fresh)]))
        n_pages: list[int] = []
        timed("mcp get_events, 40,000-char pages", events, lambda: n_pages.append(pages(db)))
        print(f"({n_pages[0]} pages; the JSONL export is {out.stat().st_size / 1e6:.1f} MB)")
        assert sqlite3.connect(fresh).execute("SELECT COUNT(*) FROM events").fetchone()[0] == events


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=50_000)
    run(parser.parse_args().events)
