"""The `dropped` frame (issue 38): an app says how many events of a run it will never deliver, per
reason; the run carries the totals (`dropped: {count, reasons}`) in the API and the live feed."""

from __future__ import annotations

import json

import pytest
from websockets.sync.client import connect

from graphmind import protocol as proto


def _run(thub, run_id):
    return thub.api("GET", f"/api/runs/{run_id}")[1]


def test_the_welcome_advertises_dropped_frames(thub):
    app = thub.app()
    assert proto.DROPPED in app.welcome["capabilities"] and proto.BATCH in app.welcome["capabilities"]


def test_dropped_totals_land_on_the_run_and_the_larger_total_wins(thub):
    app = thub.app()
    app.run_started("r1")
    assert _run(thub, "r1")["dropped"] == {"count": 0, "reasons": {}}
    app.send(proto.dropped({"r1": {"hub_stalled": 1234}}))
    thub.wait_for(lambda: _run(thub, "r1")["dropped"]["count"] == 1234, what="the count on the run")
    # Totals so far, so a resent (or older) frame changes nothing; a new reason adds to the count.
    app.send(proto.dropped({"r1": {"hub_stalled": 1000, "detached": 5}}))
    thub.wait_for(lambda: _run(thub, "r1")["dropped"]["count"] == 1239, what="the new reason")
    assert _run(thub, "r1")["dropped"] == {"count": 1239, "reasons": {"detached": 5, "hub_stalled": 1234}}
    listed = thub.api("GET", "/api/runs")[1]["runs"][0]
    assert listed["dropped"]["count"] == 1239
    assert _run(thub, "r1")["eventCount"] == 1  # the frame is not an event


def test_a_run_the_hub_never_heard_of_gets_a_row_with_its_count(thub):
    app = thub.app(app="lossy")
    app.send(proto.dropped({"gone": {"detached": 7}, "": {"detached": 3}}))
    run = thub.wait_for(lambda: thub.api("GET", "/api/runs/gone")[1].get("dropped"), what="the row")
    assert run == {"count": 7, "reasons": {"detached": 7}}
    body = _run(thub, "gone")
    assert body["app"] == "lossy" and body["eventCount"] == 0 and body["status"] == "running"
    assert [r["id"] for r in thub.api("GET", "/api/runs")[1]["runs"]] == ["gone"]  # no "" run


def test_the_live_feed_carries_the_count(thub):
    app = thub.app()
    app.run_started("r1")
    with connect(thub.live_url, open_timeout=5) as live:
        app.send(proto.dropped({"r1": {"overflow": 2}}))
        while True:
            frame = json.loads(live.recv(timeout=5))
            if frame.get("type") == "run" and frame["run"]["dropped"]["count"]:
                break
    assert frame["run"]["dropped"] == {"count": 2, "reasons": {"overflow": 2}}


@pytest.mark.parametrize(
    "runs",
    [None, [], {"r1": 5}, {"r1": {"x": -1}}, {"r1": {"x": 1.5}}, {"r1": {"x": True}}, {"r1": {"": 1}}],
)
def test_a_malformed_dropped_frame_is_refused_and_the_connection_stays(thub, runs):
    app = thub.app()
    app.run_started("r1")
    app.send({"type": proto.DROPPED, "runs": runs})
    error = app.expect("error")
    assert error["code"] == "bad_frame" and "dropped" in error["message"]
    app.send(proto.dropped({"r1": {"x": 1}}))
    thub.wait_for(lambda: _run(thub, "r1")["dropped"]["count"] == 1, what="a good frame after a bad one")
