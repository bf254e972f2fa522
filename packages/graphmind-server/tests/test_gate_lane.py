"""The gate lane on the hub's side (ingest/route.py): a frame that carries a held gate is taken whole
and at once, even while the store's backlog holds bulk frames back, so the gate shows in /api/gates
without waiting for the writer (docs/performance.md, "Where users wait")."""

from __future__ import annotations

import json

from graphmind import protocol as proto
from graphmind_server.ingest import route


def _event(seq: int, type_: str, **fields: object) -> str:
    return json.dumps({"type": type_, "seq": seq, "ts": 1.0, "runId": "r1", **fields})


def test_a_batch_with_a_gate_is_taken_whole_while_bulk_waits_for_the_backlog(thub, monkeypatch) -> None:
    # A backlog that never drains: every bulk event would wait for the writer for ever.
    monkeypatch.setattr(route, "BACKLOG_HIGH", -1)
    monkeypatch.setattr(route, "BACKLOG_LOW", -1)
    app = thub.app(client_id="held")
    gate = {
        "nodeId": "tool:lookup",
        "instanceId": "i1",
        "kind": "tool",
        "name": "lookup",
        "gateId": "g1",
        "gate": "before",
        "reason": "breakpoint",
        "actions": ["continue", "inject", "abort"],
    }
    started = _event(1, proto.NODE_STARTED, nodeId="tool:lookup", instanceId="i1", kind="tool", name="lookup")
    app.send(proto.batch([started, _event(2, proto.EXEC_PAUSED, **gate)]))
    held = thub.wait_for(lambda: thub.gates(), what="the gate, ahead of the backlog")
    assert [g["nodeId"] for g in held] == ["tool:lookup"]


def test_only_a_gate_or_its_release_opens_the_lane() -> None:
    entries = route.parse_batch(proto.batch([_event(1, proto.NODE_STARTED), _event(2, proto.NODE_FINISHED)]))
    assert not route._carries_gate(entries)
    entries = route.parse_batch(proto.batch([_event(1, proto.NODE_STARTED), _event(2, proto.EXEC_RESUMED)]))
    assert route._carries_gate(entries)
