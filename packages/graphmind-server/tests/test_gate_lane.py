"""The gate lane on the hub's side (ingest/lane.py): a frame that carries a held gate is taken whole
and at once, even while the store's backlog holds bulk frames back, so the gate shows in /api/gates
without waiting for the writer (docs/performance.md, "Where users wait")."""

from __future__ import annotations

import json

from graphmind import protocol as proto
from graphmind_server.hub.control_first import ControlFirst
from graphmind_server.ingest import lane, parse


def _event(seq: int, type_: str, **fields: object) -> str:
    return json.dumps({"type": type_, "seq": seq, "ts": 1.0, "runId": "r1", **fields})


def test_a_batch_with_a_gate_is_taken_whole_while_bulk_waits_for_the_backlog(thub, monkeypatch) -> None:
    # A backlog that never drains: every bulk event would wait for the writer for ever.
    monkeypatch.setattr(lane, "BACKLOG_HIGH", -1)
    monkeypatch.setattr(lane, "BACKLOG_LOW", -1)
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
    entries = parse.parse_batch(proto.batch([_event(1, proto.NODE_STARTED), _event(2, proto.NODE_FINISHED)]))
    assert not lane.carries_gate(entries)
    entries = parse.parse_batch(proto.batch([_event(1, proto.NODE_STARTED), _event(2, proto.EXEC_RESUMED)]))
    assert lane.carries_gate(entries)


def test_a_gate_read_from_its_socket_goes_ahead_of_bulk_queued_on_another_connection(thub) -> None:
    # 20 frames of 1,000 events queued on one connection, then a held gate on another: from the
    # moment the gate's frame is read from its socket, not one more bulk event is taken before the
    # gate is in the hub (without the read-ahead, the bulk task's next 64 entries went first).
    hub = thub.handle._server.hub
    bulk, held = thub.app(client_id="bulk"), thub.app(client_id="held")
    taken = [0]
    marks: dict[str, int] = {}
    on_event, coming, on_paused = hub.on_event, hub.control.coming, hub.on_paused

    def counting(conn: object, event: dict[str, object]) -> None:
        taken[0] += event.get("runId") == "bulk-run" and event["type"] == proto.NODE_STARTED
        on_event(conn, event)

    def read(conn: object) -> None:
        marks.setdefault("read", taken[0])
        coming(conn)

    def paused(conn: object, event: dict[str, object]) -> None:
        marks.setdefault("held", taken[0])
        on_paused(conn, event)

    hub.on_event, hub.control.coming, hub.on_paused = counting, read, paused
    frames, total = 20, 1000
    for f in range(frames):
        first = 1 + f * total
        bulk.send(
            proto.batch(
                [_event(s, proto.NODE_STARTED, runId="bulk-run") for s in range(first, first + total)]
            )
        )
    gate = {
        "nodeId": "tool:lookup",
        "instanceId": "i1",
        "gateId": "g1",
        "gate": "before",
        "reason": "breakpoint",
    }
    held.send(proto.batch([_event(1, proto.NODE_STARTED), _event(2, proto.EXEC_PAUSED, **gate)]))
    thub.wait_for(lambda: thub.gates(), what="the gate")
    thub.wait_for(lambda: taken[0] == frames * total, timeout=30, what="every bulk event")
    assert marks["read"] < frames * total, "the gate was read after the bulk: nothing to go ahead of"
    assert marks["held"] - marks["read"] == 0, marks


def test_only_a_held_gate_read_from_the_socket_puts_bulk_behind_it() -> None:
    control = ControlFirst()
    conn = object()
    lane.peek(control, conn, [b'{"type":"node.started","input":"say \\"exec.paused\\" twice"}'])
    assert not control.answering  # a payload's quote is escaped: not a gate
    lane.peek(control, conn, [b'{"type":"batch","events":[', b'{"type":"exec.paused","gateId":"g1"}]}'])
    assert control.incoming == {conn: 1}
    lane.taken(control, conn, '{"type":"node.finished"}')  # another frame handled first: still coming
    assert control.incoming == {conn: 1}
    lane.taken(control, conn, '{"type":"batch","events":[{"type":"exec.paused","gateId":"g1"}]}')
    assert not control.incoming and not control.answering
