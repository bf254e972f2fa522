"""WS /ingest, frame by frame (protocol.md)."""

from __future__ import annotations

import json
import random

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect


def _hello(**extra: object) -> str:
    return json.dumps(
        {
            "type": "hello",
            "protocol": 1,
            "app": "t",
            "clientId": "c-1",
            "pid": 1,
            "sdk": {"name": "t", "version": "0"},
            **extra,
        }
    )


def test_welcome_carries_the_protocol_and_the_debug_state(thub):
    app = thub.app()
    assert app.welcome["protocol"] == 1
    assert app.welcome["hub"]["name"] == "graphmind-server"
    assert app.welcome["debug"] == {
        "version": 0,
        "breakpoints": [],
        "mode": "run",
        "pauseOnError": "on",
        "pauseOnHandoff": "off",
    }


def test_a_frame_before_hello_is_refused_with_4002(thub):
    with connect(thub.ingest_url) as ws:
        ws.send(json.dumps({"type": "run.started", "seq": 1, "runId": "r"}))
        error = json.loads(ws.recv(timeout=5))
        assert error["code"] == "hello_required"
        with pytest.raises(ConnectionClosed) as info:
            ws.recv(timeout=5)
    assert info.value.rcvd.code == 4002


def test_an_unsupported_protocol_is_refused_with_4001(thub):
    with connect(thub.ingest_url) as ws:
        ws.send(_hello(protocol=9, protocols=[7, 9]))
        error = json.loads(ws.recv(timeout=5))
        assert error["code"] == "unsupported_protocol" and error["supported"] == [1]
        with pytest.raises(ConnectionClosed) as info:
            ws.recv(timeout=5)
    assert info.value.rcvd.code == 4001


def test_the_highest_common_version_is_chosen(thub):
    with connect(thub.ingest_url) as ws:
        ws.send(_hello(protocol=3, protocols=[1, 2, 3]))
        assert json.loads(ws.recv(timeout=5))["protocol"] == 1


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("not json", "bad_frame"),
        ("[1, 2]", "bad_frame"),
        ('{"no": "type"}', "bad_frame"),
        ('{"type": "node.started", "runId": "r"}', "bad_frame"),
        ('{"type": "node.started", "seq": "1", "runId": "r"}', "bad_frame"),
        ('{"type": "node.started", "seq": 1}', "bad_frame"),
        ('{"type": "hello", "protocol": 1}', "bad_frame"),
        ('{"type": "made.up"}', "unknown_type"),
    ],
)
def test_a_frame_the_hub_cannot_read_is_answered_and_the_connection_stays(thub, frame, code):
    app = thub.app()
    app.send(frame)
    assert app.expect("error")["code"] == code
    app.run_started("r1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs")[1]["runs"], what="the run after a bad frame")
    assert thub.api("GET", "/api/runs/r1")[1]["eventCount"] == 1


def test_binary_frames_are_refused(thub):
    app = thub.app()
    app.send(b"\x00\x01")
    assert app.expect("error")["code"] == "bad_frame"


def test_500_random_malformed_frames_leave_the_hub_serving_and_the_store_intact(thub):
    rng = random.Random(4)
    app = thub.app()
    app.run_started("r1")
    app.node_started("r1", "tool:a", "i1", input={"x": 1})
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("eventCount") == 2, what="2 events")
    before = thub.api("GET", "/api/runs/r1/events")[1]
    samples = [
        '{"type":',
        "{}",
        "null",
        '{"type": 5}',
        '{"type": "node.error", "seq": true, "runId": "r1"}',
        '{"type": "node.started", "seq": -1, "runId": "r1"}',
        '{"type": "run.started", "seq": 3, "runId": ""}',
        '"\\ud800"',
        "[" * 5000 + "]" * 5000,
    ]
    for _ in range(500):
        kind = rng.randrange(3)
        if kind == 0:
            app.send(rng.choice(samples))
        elif kind == 1:
            app.send("".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(1, 80))))
        else:
            app.send(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 50))))
    errors = [app.expect("error", timeout=10) for _ in range(500)]
    assert {e["code"] for e in errors} <= {"bad_frame", "unknown_type"}
    app.node_finished("r1", "tool:a", "i1", output="ok")
    thub.wait_for(
        lambda: thub.api("GET", "/api/runs/r1")[1]["eventCount"] == 3, what="the event after the flood"
    )
    after = thub.api("GET", "/api/runs/r1/events")[1]["events"]
    assert after[:2] == before["events"] and after[2]["type"] == "node.finished"
    assert thub.api("GET", "/api/health")[1]["ok"] is True


def test_replayed_events_are_stored_once(thub):
    app = thub.app(client_id="same")
    app.run_started("r1")
    app.node_started("r1", "tool:a", "i1")
    app.close()
    again = thub.app(client_id="same")
    again.seq = app.seq
    for event in app.sent:  # what an SDK replays from its buffer on reattach
        again.send(event)
    again.node_finished("r1", "tool:a", "i1", output=1)
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1]["eventCount"] == 3, what="3 events")
    events = thub.api("GET", "/api/runs/r1/events")[1]["events"]
    assert [e["seq"] for e in events] == [1, 2, 3]


def test_events_are_stored_exactly_as_sent_unknown_fields_included(thub):
    app = thub.app()
    raw = (
        '{"type":"run.started","seq":1,"ts":1.5,"runId":"r1","name":"n","futureField":{"b":[1,2.50,"\\u00e9"]},'
        '"z":null}'
    )
    app.send(raw)
    thub.wait_for(lambda: thub.api("GET", "/api/runs").__getitem__(1)["runs"], what="the run")
    status, body = thub.api("GET", "/api/runs/r1/events")
    assert status == 200
    assert body["events"][0] == json.loads(raw)


def test_nan_values_are_stored_as_null_rather_than_lost(thub):
    app = thub.app()
    app.send('{"type":"node.finished","seq":1,"runId":"r1","nodeId":"tool:a","instanceId":"i","output":NaN}')
    thub.wait_for(lambda: thub.api("GET", "/api/runs").__getitem__(1)["runs"], what="the run")
    assert thub.api("GET", "/api/runs/r1/events")[1]["events"][0]["output"] is None


def test_lone_surrogates_never_poison_a_batch(thub):
    good, odd = thub.app(), thub.app(app="odd")
    good.run_started("r1")
    odd.send('{"type":"run.started","seq":1,"runId":"r2","name":"bad \\ud800 name","nodeId":"agent:\\udfff"}')
    odd.send('{"type":"node.started","seq":2,"runId":"r\\ud800","nodeId":"tool:x","instanceId":"i"}')
    assert odd.expect("error")["code"] == "bad_frame"
    good.node_started("r1", "tool:a", "i1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("eventCount") == 2, what="the good events")
    run = thub.wait_for(
        lambda: (r := thub.api("GET", "/api/runs/r2")[1]).get("eventCount") == 1 and r, what="r2"
    )
    assert run["name"] == "bad \ufffd name" and run["nodes"][0]["nodeId"] == "agent:\ufffd"
    assert thub.api("GET", "/api/runs/r2/events")[1]["events"][0]["name"] == "bad \ud800 name"


def test_an_item_the_database_refuses_costs_only_itself(tmp_path):
    import threading

    from graphmind_server.store.items import EventItem
    from graphmind_server.store.schema import open_database
    from graphmind_server.store.writer import Writer

    done = threading.Event()
    commits = []

    def notify(c):
        commits.append(c)
        if c.processed == 3:
            done.set()

    writer = Writer(open_database(tmp_path / "w.db"), notify)
    bad = EventItem("c", "app", {"type": "node.started", "seq": 2, "runId": "r"}, "{}", 1.0)
    bad.client_id = "\udc80"  # not encodable: SQLite cannot bind it
    for item in (
        EventItem("c", "app", {"type": "run.started", "seq": 1, "runId": "r"}, '{"a":1}', 1.0),
        bad,
        EventItem("c", "app", {"type": "node.started", "seq": 3, "runId": "r"}, '{"a":3}', 1.0),
    ):
        writer.queue.put(item)
    writer.start()
    assert done.wait(5)
    writer.stop()
    stored = [raw for c in commits for _, _, raw in c.events]
    assert stored == ['{"a":1}', '{"a":3}']


def test_a_text_frame_that_is_not_utf8_is_one_log_line_without_a_traceback(thub, caplog):
    import logging

    from websockets.sync.client import connect

    caplog.set_level(logging.WARNING)
    with connect(thub.ingest_url) as ws:
        ws.send(json.dumps({"type": "hello", "protocol": 1, "app": "x", "clientId": "c-utf8", "pid": 1}))
        ws.recv(timeout=5)
        with ws.send_context():
            ws.protocol.send_text(b'{"type":"\xff"}')  # a text frame whose bytes are not UTF-8
        with pytest.raises(Exception):  # noqa: B017 - closed by the hub: 1007
            ws.recv(timeout=5)
    records = [r for r in caplog.records if "UTF-8" in r.getMessage()]
    assert len(records) == 1 and records[0].exc_info is None, [r.getMessage() for r in caplog.records]
    assert thub.api("GET", "/api/health")[0] == 200


@pytest.mark.parametrize("resent", [3, 2])
def test_the_writer_takes_a_resent_event_for_a_duplicate_itself_not_by_the_unique_index(
    tmp_path, capsys, resent
):
    """An app resends its last event (3) or an earlier one (2) after a reconnect: the writer's own
    check skips it. Were it taken for new, the database's unique index would refuse it, the batch
    would fail, the hub would print a false "could not store" and redo the batch item by item."""
    from graphmind_server.store.items import EventItem
    from graphmind_server.store.schema import open_database
    from graphmind_server.store.writer import Writer

    def item(seq: int) -> EventItem:
        ev = {"type": "node.started", "seq": seq, "runId": "r", "nodeId": "tool:t", "instanceId": f"i{seq}"}
        return EventItem("c", "app", ev, json.dumps(ev), 1.0)

    writer = Writer(open_database(tmp_path / "w.db"), lambda _: None)
    assert writer.write_now([item(1), item(2), item(3)]) == 3
    assert writer.write_now([item(resent), item(4)]) == 1  # one transaction: raises if it failed
    assert writer._failures == 0 and "could not store" not in capsys.readouterr().err
    assert [r[0] for r in writer.conn.execute("SELECT seq FROM events ORDER BY seq")] == [1, 2, 3, 4]
