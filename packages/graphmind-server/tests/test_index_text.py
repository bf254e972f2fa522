"""The search-index rows a batch-indexing writer makes in Python (store/index_text.py) are the very
rows search.INDEX_SQL makes with SQLite's json_tree: the same file, the same search hits, for the
year-of-runs generator's events and for odd values (floats, booleans, unicode, keys SQLite quotes,
NaN, duplicate keys, deep values), each either rendered the same or left to the SQL."""

from __future__ import annotations

import json
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from graphmind_server.store import index_text, search
from graphmind_server.store.importing import Import
from graphmind_server.store.items import EventItem

BENCH = Path(__file__).resolve().parents[3] / "bench"

ODD: list[Any] = [
    0.2,
    3.0,
    -0.5,
    -0.0,
    1e20,
    1e-7,
    0.1 + 0.2,
    123456789012345.0,
    1234567890123456.0,
    2**63,
    -(2**63) + 1,
    2**62,
    True,
    False,
    None,
    "",
    "café ☕ 😀",
    "tab\there",
    "\ud800",
    "nul\x00",
    [1, [2, [3, {"deep": "x"}]]],
    {"": 1, "a b": 2, "k.l": "y"},
]


def _events(rng: random.Random) -> list[str]:
    """Raw texts of events: the bench's own (first, GENERATED of them), and odd values under every
    key the index reads."""
    sys.path.insert(0, str(BENCH))
    try:
        import year_of_runs
    finally:
        sys.path.remove(str(BENCH))
    raws: list[str] = []
    for index in range(4):
        _, _, evs = year_of_runs.run_events(rng, index, 1.7e12, steps=3, agents=("a", "b") if index else ())
        raws += [json.dumps(e, separators=(",", ":")) for e in evs]
    GENERATED.append(len(raws))
    keys = [
        "name",
        "nodeId",
        "instanceId",
        "app",
        "input",
        "inputs",
        "input_x",
        "output",
        "error",
        "meta",
        "value",
    ]
    for n, value in enumerate(ODD):
        for key in keys:
            ev = {"type": "node.started", "seq": n, "runId": "r", key: value}
            raws.append(json.dumps(ev))
            raws.append(json.dumps({**ev, "input": {"nested": value, "list": [value, "w"]}}))
    raws += [
        '{"type":"node.started","runId":"r","input":{"a":1,"a":2}}',  # a key twice
        '{"type":"node.started","runId":"r","input":{"x":NaN}}',
        '{"type":"node.finished","runId":"r","output":1e999}',
        '{"type":"node.finished","runId":"r","output":-0}',
        '{"type":"node.finished","runId":"r","output":"a\\u00e9\\ud83d\\ude00"}',
        '{"type":"node.finished","runId":"r","nodeId":{"a":1},"output":"x"}',
        '{"type":"run.finished","runId":"r","output":"not indexed"}',
        '{"type":"node.started","runId":"r","input":' + "[" * 100 + "1" + "]" * 100 + "}",
    ]
    return raws


GENERATED: list[int] = []


def _sql_rows(raws: list[str]) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(":memory:")
    conn.text_factory = lambda b: b.decode("utf-8", "replace")  # a lone surrogate's text (left to the SQL)
    conn.execute("CREATE TABLE events (cursor INTEGER PRIMARY KEY, run_id TEXT, type TEXT, body TEXT)")
    conn.execute("CREATE TABLE search (rowid INTEGER PRIMARY KEY, body, run_id, node_id, instance_id)")
    conn.executemany(
        "INSERT INTO events VALUES (?, 'r', ?, ?)",
        [(i, json.loads(raw, strict=False).get("type") if "NaN" not in raw else "node.started", raw)
         for i, raw in enumerate(raws, 1)],
    )  # fmt: skip
    conn.execute(search.INDEX_SQL, (0, len(raws)))
    return conn.execute(
        "SELECT rowid, body, run_id, node_id, instance_id FROM search ORDER BY rowid"
    ).fetchall()


def test_each_row_made_in_python_is_the_sqls_row() -> None:
    raws = _events(random.Random(5))
    by_sql = {row[0]: row for row in _sql_rows(raws)}
    unsure = []
    for cursor, raw in enumerate(raws, 1):
        etype = "node.started" if "NaN" in raw else json.loads(raw).get("type")
        row = index_text.row(cursor, "r", etype, raw, search.INDEXED_TYPES)
        if row is None:
            unsure.append(cursor)  # left to the SQL
            continue
        if row is index_text.SKIP:
            assert cursor not in by_sql, raw
        else:
            assert row == by_sql.get(cursor), raw
    assert not [c for c in unsure if c <= GENERATED[-1]]  # an app's events are made in Python
    assert len(unsure) < len(raws) / 2  # the odd ones mostly too


def _fill(db: Path, raws: list[str]) -> None:
    imp = Import(db)
    try:
        with imp.transaction():
            items = []
            for seq, raw in enumerate(raws, 1):
                ev = json.loads(raw)
                ev["seq"] = seq
                items.append(EventItem("c", "app", ev, json.dumps(ev), float(seq)))
            imp.write(items)
    finally:
        imp.close()


def _dump(db: Path) -> tuple[list[Any], list[Any], list[Any]]:
    conn = sqlite3.connect(db)
    try:
        index = conn.execute(
            "SELECT rowid, body, run_id, node_id, instance_id FROM search ORDER BY rowid"
        ).fetchall()
        stored = conn.execute(
            "SELECT cursor, run_id, client_id, seq, type, body FROM events ORDER BY cursor"
        ).fetchall()
        hits = [
            conn.execute(
                "SELECT rowid, snippet(search, 0, '«', '»', '…', 12) FROM search WHERE search MATCH ? ORDER BY rowid",
                (word,),
            ).fetchall()
            for word in ("refund", "invoice timeout", "café", "1", '"0.2"', "run_sql", "gpt")
        ]
        return index, stored, hits
    finally:
        conn.close()


def test_an_import_stores_and_indexes_the_same_as_through_the_sql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    odd = ("NaN", "1e999", '"a":1,"a":2', "\\ud800")  # what an app's JSON would not be, or a hub not take
    raws = [r for r in _events(random.Random(9)) if not any(o in r for o in odd)]
    raws = [r for r in raws if json.loads(r).get("runId") and type(json.loads(r).get("seq", 0)) is int]
    _fill(tmp_path / "python.db", raws)
    monkeypatch.setattr(index_text, "row", lambda *args: None)  # every row through the SQL, as before
    _fill(tmp_path / "sql.db", raws)
    made, by_sql = _dump(tmp_path / "python.db"), _dump(tmp_path / "sql.db")
    assert made[0] == by_sql[0]
    assert made[1] == by_sql[1]
    assert made[2] == by_sql[2]
    assert all(made[2][:2]), "the words searched for are in the events"
