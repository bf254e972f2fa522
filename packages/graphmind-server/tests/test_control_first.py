"""The control path ahead of bulk ingest (issue 37; hub/control_first.py): while an answer to a gate is
on its way, other apps' ingest and the store writer wait (bounded); the answered app never does."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading

from graphmind_server.hub import control_first
from graphmind_server.hub.control_first import ControlFirst


async def test_other_connections_wait_while_an_answer_is_on_its_way_and_go_on_when_it_is_done() -> None:
    control = ControlFirst()
    answered, bulk = object(), object()
    assert not control.holds_back(bulk)  # no answer: nothing waits
    order: list[str] = []

    async def bulk_frame() -> None:
        await control.wait(bulk)
        order.append("bulk frame")

    with control.answer(answered):
        assert control.holds_back(bulk) and not control.holds_back(answered)
        assert not control.clear.is_set()  # the writer thread waits too
        waiting = asyncio.ensure_future(bulk_frame())
        await control.wait(answered)  # the app being answered is never held back
        order.append("exec.resumed")
        await asyncio.sleep(0)
        assert not waiting.done()
    await waiting
    assert order == ["exec.resumed", "bulk frame"]
    assert control.clear.is_set() and not control.answering


async def test_a_stuck_answer_holds_bulk_frames_back_at_most_once_per_connection(monkeypatch) -> None:
    monkeypatch.setattr(control_first, "MAX_WAIT_S", 0.01)
    control = ControlFirst()
    bulk = object()
    with control.answer(object()):
        await control.wait(bulk)  # waits MAX_WAIT_S, then gives up for this answer
        assert not control.holds_back(bulk)
    with control.answer(object()):  # the next answer: held back again
        assert control.holds_back(bulk)


def test_the_writer_waits_for_the_answer_and_never_longer_than_the_bound(monkeypatch) -> None:
    control = ControlFirst()
    done = threading.Event()

    def writer() -> None:
        control.writer_wait()
        done.set()

    with control.answer(object()):
        thread = threading.Thread(target=writer)
        thread.start()
        assert not done.wait(0.02)  # held while the answer is on its way
    thread.join(5)
    assert done.is_set()
    monkeypatch.setattr(control_first, "MAX_WAIT_S", 0.01)
    with control.answer(object()):
        control.writer_wait()  # returns after the bound even though the answer is not done


def test_nested_answers_clear_only_when_the_last_one_is_done() -> None:
    control = ControlFirst()
    a, b = object(), object()
    with control.answer(a):
        with control.answer(b):
            assert control.holds_back(object())
        assert control.holds_back(object()) and not control.holds_back(a)
    assert not control.holds_back(object()) and control.clear.is_set()


def _cursor(db, type_: str, run_id: str) -> int:
    import sqlite3

    with contextlib.closing(sqlite3.connect(db)) as conn:
        for cursor, body in conn.execute("SELECT cursor, body FROM events ORDER BY cursor"):
            event = json.loads(body)
            if event["type"] == type_ and event["runId"] == run_id:
                return int(cursor)
    raise AssertionError(f"no {type_} of {run_id} stored")


def test_another_apps_frame_sent_during_an_answer_is_stored_after_the_answer(thub, monkeypatch) -> None:
    """The hub, end to end: a bulk frame that arrives while an answer is on its way waits for the
    app's exec.resumed (without hub/control_first.py it is stored first: it was sent first)."""
    monkeypatch.setattr(control_first, "MAX_WAIT_S", 30.0)  # the bound never decides here
    app, other = thub.app(client_id="held"), thub.app(client_id="busy")
    other.run_started("r2")
    app.run_started("r1")
    paused = app.hold("r1", "tool:lookup", "i1")
    gate = thub.wait_for(lambda: thub.gates(), what="the gate")[0]
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r2")[0] == 200, what="the busy app's run")
    answered: list[int] = []
    poster = threading.Thread(
        target=lambda: answered.append(
            thub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0]
        )
    )
    poster.start()
    app.expect("gate.resolve")  # the answer is on its way: the hub waits for exec.resumed
    other.node_started("r2", "tool:bulk", "b1")  # bulk, sent before the app confirms
    app.resume(paused)
    poster.join(10)
    assert answered == [200]
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r2")[1].get("eventCount") == 2, what="the bulk event")
    assert _cursor(thub.db, "exec.resumed", "r1") < _cursor(thub.db, "node.started", "r2")


def test_a_gate_coming_in_holds_bulk_back_until_it_is_taken_or_its_connection_is_gone() -> None:
    control = ControlFirst()
    held, bulk = object(), object()
    with control.answer(held):
        control.coming(held)
        control.coming(held)  # two frames holding a gate read, neither handled yet
        assert control.holds_back(bulk) and not control.holds_back(held) and not control.clear.is_set()
        control.taken(held)
        assert control.holds_back(bulk)
        control.forget(held)  # closed before its second frame was handled: it never will be
        assert control.answering == {held: 1} and not control.incoming  # the answer is still on its way
        control.taken(held)  # nothing coming: nothing to end
        assert control.answering == {held: 1}
    assert not control.answering and control.clear.is_set()
