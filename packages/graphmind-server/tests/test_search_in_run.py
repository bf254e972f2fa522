"""A search within a run bounds the full-text index by the run's first cursor, read once per run
and database file (store/search.py `first_cursor`): the bound stays right after the run is deleted
and sent again, and a run of the same id in another file has its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphmind_server.store import search
from graphmind_server.store.importing import Import
from graphmind_server.store.items import EventItem
from graphmind_server.store.retention import delete_runs


def events(run_id: str, word: str, steps: int, seq: int = 0) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "type": "run.started",
            "runId": run_id,
            "name": "a",
            "app": "a",
            "nodeId": "agent:a",
            "kind": "agent",
        }
    ]
    for i in range(steps):
        out.append(
            {
                "type": "node.started",
                "runId": run_id,
                "nodeId": "tool:t",
                "instanceId": f"t{i}",
                "input": {"q": word},
            }
        )
    for k, ev in enumerate(out, seq + 1):
        ev["seq"], ev["ts"] = k, 1.7e12 + k
    return out


def store(db: Path, client: str, evs: list[dict[str, Any]]) -> None:
    imp = Import(db)
    try:
        with imp.transaction():
            imp.write([EventItem(client, "a", e, json.dumps(e), e["ts"]) for e in evs])
    finally:
        imp.close()


def hits(db: Path, word: str, run_id: str) -> int:
    imp = Import(db)
    try:
        return len(search.search(imp.conn, word, run_id, 100))
    finally:
        imp.close()


def test_a_run_deleted_and_sent_again_is_searched_whole(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    store(db, "c1", events("r1", "alpha", 3))
    assert hits(db, "alpha", "r1") == 3  # its first cursor is now known
    imp = Import(db)
    try:
        with imp.transaction():
            delete_runs(imp.conn, ["r1"])
    finally:
        imp.close()
    store(db, "c2", events("r0", "gamma", 5))
    store(db, "c2", events("r1", "beta", 4, seq=100))
    assert hits(db, "alpha", "r1") == 0
    assert hits(db, "beta", "r1") == 4


def test_the_same_run_id_in_another_file_has_its_own_bound(tmp_path: Path) -> None:
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    store(first, "c1", events("r0", "gamma", 20))
    store(first, "c2", events("r9", "alpha", 2))
    assert hits(first, "alpha", "r9") == 2  # r9 starts at cursor 22 in a.db
    store(second, "c1", events("r9", "alpha", 3))  # and at cursor 1 in b.db
    assert hits(second, "alpha", "r9") == 3
