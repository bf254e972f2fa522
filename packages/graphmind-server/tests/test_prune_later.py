"""A start-up prune too big to do before the hub listens (store/retention.py) goes on once it
listens, a chunk per writer transaction, while apps' events keep being stored; what it deleted is the
same as the prune before listening would have deleted."""

from __future__ import annotations

import sqlite3
from typing import Any

from graphmind_server.store import retention


def _seed(thub: Any, runs: int) -> None:
    app = thub.app(app="old")
    for i in range(runs):
        app.run_started(f"old-{i}")
        app.node_started(f"old-{i}", "tool:search", f"i{i}", input={"q": "cats"})
        app.node_finished(f"old-{i}", "tool:search", f"i{i}", output={"hits": 1})
        app.run_finished(f"old-{i}")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs?limit=100")[1]["runs"]) == runs, what="seeded")


def test_a_big_prune_goes_on_after_the_hub_listens_and_keeps_what_a_small_one_keeps(
    make_hub: Any, monkeypatch: Any
) -> None:
    hub = make_hub(retention=False)
    _seed(hub, 12)
    hub.stop()
    monkeypatch.setattr(retention, "PRUNE_BEFORE_LISTEN_EVENTS", 0)  # every prune is "big"
    monkeypatch.setattr(retention, "PRUNE_CHUNK_EVENTS", 4)  # a run per transaction
    later = make_hub(keep_runs=5)
    app = later.app(app="new")  # attached while the prune goes on
    app.run_started("new-0")
    app.node_started("new-0", "tool:search", "n1", input={"q": "dogs"})
    app.run_finished("new-0")
    ids = lambda: {r["id"] for r in later.api("GET", "/api/runs?limit=100")[1]["runs"]}  # noqa: E731
    # The newest 5 of what was stored at start-up stay, and the run made since.
    later.wait_for(lambda: len(ids()) == 6, what="the prune done")
    assert ids() == {"new-0", "old-11", "old-10", "old-9", "old-8", "old-7"}
    assert later.api("GET", "/api/runs/new-0")[1]["eventCount"] == 3
    assert later.api("GET", "/api/search?q=cats")[1]["hits"][-1]["runId"] == "old-7"  # the index went too
    with sqlite3.connect(later.db) as conn:
        assert conn.execute("SELECT COUNT(DISTINCT run_id) FROM events").fetchone()[0] == 6


def test_the_plan_groups_runs_by_events() -> None:
    plan = retention.Plan([("a", 3), ("b", 3), ("c", 10), ("d", 1)], 0, 5, 30)
    assert plan.chunks(6) == [["a", "b"], ["c"], ["d"]]
    assert plan.events == 17 and plan.pruned().runs == 4
