"""WS /ingest, batch frames (protocol.md, "Batch frames"): many events in one text frame."""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

import pytest

from graphmind import protocol as proto
from graphmind_server.ingest.route import parse_frame


def _event(seq: int, run_id: str = "r1", **fields: Any) -> str:
    base: dict[str, Any] = {"type": "node.started", "seq": seq, "ts": 1.5, "runId": run_id}
    if seq == 1:
        base = {
            "type": "run.started",
            "seq": 1,
            "ts": 1.5,
            "runId": run_id,
            "name": "agent",
            "nodeId": "agent:agent",
        }
    return proto.encode({**base, **fields})


def _bodies(thub: Any, run_id: str, count: int) -> list[str]:
    """The stored JSON texts of a run, by seq, once the hub has `count` of them."""
    thub.wait_for(
        lambda: thub.api("GET", f"/api/runs/{run_id}")[1].get("eventCount") == count, what=f"{count} events"
    )
    with sqlite3.connect(thub.db) as db:
        return [r[0] for r in db.execute("SELECT body FROM events WHERE run_id = ? ORDER BY seq", (run_id,))]


def test_welcome_advertises_batch_frames(thub):
    assert proto.takes_batches(thub.app().welcome)


def test_each_event_of_a_batch_is_stored_byte_for_byte_as_if_it_had_come_alone(thub):
    texts = [
        _event(1),
        _event(2, nodeId="tool:é", input={"q": "naïve ☃", "n": [1, 2.5, None]}, futureField={"x": True}),
        '{"type":"node.finished","seq":3,"runId":"r1","nodeId":"tool:a","instanceId":"i","output":2.50}',
        '{"type":"node.finished","seq":4,"runId":"r1","nodeId":"tool:a","instanceId":"j","output":NaN}',
    ]
    alone = [_event(1, "r2"), *(t.replace('"runId":"r1"', '"runId":"r2"') for t in texts[1:])]
    thub.app().send(proto.batch(texts))
    other = thub.app()  # another client: the hub keeps one event per (clientId, seq)
    for text in alone:
        other.send(text)
    batched, single = _bodies(thub, "r1", 4), _bodies(thub, "r2", 4)
    assert [b.replace('"runId":"r1"', '"runId":"r2"') for b in batched] == single
    assert batched[:3] == texts[:3]  # exactly as sent: spelling, unknown fields, non-ASCII
    assert batched[3] == parse_frame(texts[3])[1]  # NaN stored as null, as for a frame of its own
    assert json.loads(batched[3])["output"] is None


def test_a_bad_entry_is_answered_and_the_others_are_kept(thub):
    app = thub.app()
    entries = [
        _event(1),
        "[1, 2]",
        '{"type":"node.started","runId":"r1"}',
        '{"type":"node.started","seq":9,"runId":"r1","v":1e400}',
        _event(2),
    ]
    app.send(proto.batch(entries))
    errors = [app.expect("error") for _ in range(3)]
    assert [e["code"] for e in errors] == ["bad_frame"] * 3
    assert [e["message"].split(":")[0] for e in errors] == ["batch entry 1", "batch entry 2", "batch entry 3"]
    assert "must be a JSON object" in errors[0]["message"] and "'seq'" in errors[1]["message"]
    assert "out of range" in errors[2]["message"]
    assert _bodies(thub, "r1", 2) == [entries[0], entries[4]]


def test_an_entry_with_an_integer_too_long_to_read_is_refused_alone(thub):
    """Python's int() refuses more than 4,300 digits: that entry only, not the batch around it."""
    app = thub.app()
    huge = "9" * 5000
    entries = [_event(1), '{"type":"node.started","seq":2,"runId":"r1","input":' + huge + "}", _event(3)]
    app.send(proto.batch(entries))
    error = app.expect("error")
    assert error["code"] == "bad_frame" and error["message"].startswith("batch entry 1: "), error
    assert _bodies(thub, "r1", 2) == [entries[0], entries[2]]


@pytest.mark.parametrize(
    "frame",
    [
        '{"type":"batch","events":[{"type":"run.started","seq":1,"runId":"r9"}',  # cut short
        '{"type":"batch"}',
        '{"type":"batch","events":{"type":"run.started","seq":1,"runId":"r9"}}',
        '{"type":"batch","events":[{"type":"run.started","seq":1,"runId":"r9"} 1]}',
        '{"type":"batch","events":[{"type":"run.started","seq":1,"runId":"r9"}]} extra',
    ],
)
def test_a_malformed_batch_is_refused_whole_and_the_connection_stays(thub, frame):
    app = thub.app()
    app.send(frame)
    error = app.expect("error")
    assert error["code"] == "bad_frame" and "batch" in error["message"]
    app.run_started("r1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs")[1]["runs"], what="the run after a bad batch")
    assert thub.api("GET", "/api/runs/r9")[0] == 404  # nothing of the refused batch


def test_a_batch_in_another_spelling_is_read_too(thub):
    first, second = _event(1), '{ "type" : "node.started", "seq" : 2, "runId" : "r1" }'
    app = thub.app()
    app.send(f' {{ "events" : [ {first} ,\n {second} ] , "type" : "batch", "note": [1, {{"a": 2}}] }} ')
    assert _bodies(thub, "r1", 2) == [first, second]


def test_a_batch_or_hello_inside_a_batch_is_refused_and_the_rest_kept(thub):
    app = thub.app()
    nested = proto.batch([_event(5)])
    app.send(proto.batch([_event(1), nested, app.welcome and '{"type":"hello","protocol":1}', _event(2)]))
    errors = [app.expect("error") for _ in range(2)]
    assert [e["message"] for e in errors] == [
        "batch entry 1: a batch cannot be inside a batch",
        "batch entry 2: a hello cannot be inside a batch",
    ]
    assert _bodies(thub, "r1", 2) == [_event(1), _event(2)]


def test_control_frames_in_a_batch_are_handled_as_if_alone(thub):
    app = thub.app(auto_ack=False, client_id="acker")
    answer: list[Any] = []
    put = threading.Thread(target=lambda: answer.append(thub.api("PUT", "/api/debug", {"mode": "step"})))
    put.start()  # the hub waits for every app's debug.ack before it answers
    version = app.expect("debug.state")["version"]
    app.send(proto.batch([_event(1), proto.encode({"type": "debug.ack", "version": version})]))
    put.join(10)
    assert answer and answer[0][0] == 200 and "pending" not in answer[0][1]


def test_a_replayed_batch_is_stored_once(thub):
    app = thub.app(client_id="same")
    app.send(proto.batch([_event(1), _event(2)]))
    _bodies(thub, "r1", 2)
    app.close()
    again = thub.app(client_id="same")
    again.send(proto.batch([_event(1), _event(2), _event(3)]))  # the SDK replays its ring on reattach
    assert [json.loads(b)["seq"] for b in _bodies(thub, "r1", 3)] == [1, 2, 3]
