"""The MCP tools' answers as plain functions (no SDK): filters, budgets, held gates without a hub."""

from __future__ import annotations

import json

import pytest

from graphmind_server.export.source import open_readonly
from graphmind_server.mcp_server.reads import (
    Links,
    ToolInputError,
    get_events,
    get_run,
    held_gates_from_db,
    list_runs,
    search_events,
    shrink,
)

LINKS = Links(4747)


@pytest.fixture
def db(make_hub, tmp_path):
    path = tmp_path / "hub.db"
    hub = make_hub(db=path)
    app = hub.app(app="travel")
    app.run_started("r-done", "plan trip")
    app.run_finished("r-done")
    other = hub.app(app="support")
    other.run_started("r-held", "ticket 42")
    paused = other.hold("r-held", "tool:refund", "i1", input={"amount": 10, "password": "pw"})
    other.hold("r-held", "tool:notify", "i2")
    other.resume(paused)
    hub.wait_for(lambda: hub.api("GET", "/api/runs/r-held")[1].get("eventCount") == 4, 5, "events stored")
    return path


def test_list_runs_filters_by_status_app_and_name(db):
    conn = open_readonly(db)

    def ids(**kw):
        args = {"status": None, "app": None, "name_contains": None, "limit": 20} | kw
        return [r["id"] for r in json.loads(list_runs(conn, LINKS, **args))["runs"]]

    assert ids() == ["r-held", "r-done"]
    assert ids(status="finished") == ["r-done"]
    assert ids(app="support") == ["r-held"]
    assert ids(name_contains="TICKET") == ["r-held"]
    assert ids(limit=1) == ["r-held"]
    with pytest.raises(ToolInputError, match="status must be one of"):
        ids(status="done")
    with pytest.raises(ToolInputError, match="limit must be from 1 to 200"):
        ids(limit=0)


def test_held_gates_without_a_hub_come_from_the_events_of_running_runs(db):
    gates = held_gates_from_db(open_readonly(db), LINKS)
    assert [(g["runId"], g["nodeId"], g["gate"]) for g in gates] == [("r-held", "tool:notify", "before")]
    assert gates[0]["link"] == "http://127.0.0.1:4747/#/run/r-held"


def test_answers_remove_secret_keys_and_keep_redacted_values(db):
    conn = open_readonly(db)
    page = json.loads(
        get_events(conn, LINKS, "r-held", after=0, limit=10, budget=10_000, types=["exec.paused"])
    )
    assert [e["nodeId"] for e in page["events"]] == ["tool:refund", "tool:notify"]
    assert page["events"][0]["input"] == {"amount": 10, "password": "__REDACTED__"}
    assert json.loads(search_events(conn, LINKS, "refund", run_id=None, limit=5, budget=10_000))["matches"]
    assert json.loads(get_run(conn, LINKS, "r-held"))["link"] == "http://127.0.0.1:4747/#/run/r-held"


def test_an_event_too_large_for_any_budget_keeps_its_identity():
    huge = {"type": "node.finished", "seq": 7, "nodeId": "tool:x", "output": ["y" * 5000] * 200}
    small = shrink(huge, 2000)
    assert len(json.dumps(small, separators=(",", ":"))) <= 2000
    assert (small["type"], small["seq"], small["nodeId"], small["_truncated"]) == (
        "node.finished",
        7,
        "tool:x",
        True,
    )
