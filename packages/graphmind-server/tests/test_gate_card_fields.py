"""What the viewer's pause card and node detail read from the hub (issues 30 and 31): the held
gate's new exec.paused fields, a replay's links in the runs list, and node.attempt events."""

from __future__ import annotations

EXTRAS = {
    "editable": False,
    "notEditable": "input hidden by GRAPHMIND_HIDE_INPUTS",
    "reloadable": False,
    "notReloadable": "a model call runs no code of yours to reload (edit its input or inject a reply)",
    "attempt": 2,
    "refused": "the value does not match the tool's outputSchema",
    "injectSkeleton": {"temperature": 0},
    "expected": {"q": "lisbon"},
    "replay": {"source": "r0", "occurrence": 1, "why": "the input differs"},
}


def test_a_held_gate_carries_the_fields_the_card_shows(thub):
    app = thub.app()
    app.run_started("r1")
    app.node_started("r1", "tool:search", "i1", input={"q": "porto"})
    # reloadOptIn: this hub has no token, so it offers reload only to an app that opted in.
    app.hold("r1", "tool:search", "i1", input={"q": "porto"}, reloadOptIn=True, **EXTRAS)
    gate = thub.wait_for(lambda: thub.gates(), what="the gate in GET /api/gates")[0]
    assert {k: gate.get(k) for k in EXTRAS} == EXTRAS
    # A gate from an app that sends none of them: not editable (and why), no divergence fields.
    app.node_started("r1", "tool:search", "i2", input={"q": "x"})
    app.hold("r1", "tool:search", "i2", input={"q": "x"})
    older = thub.wait_for(
        lambda: [g for g in thub.gates() if g["instanceId"] == "i2"], what="the second gate"
    )[0]
    assert older["editable"] is False and "too old" in older["notEditable"]
    assert older["expected"] is None and older["replay"] is None


def test_a_replayed_run_names_its_recording_in_the_runs_list(thub):
    app = thub.app()
    app.run_started("r0", name="recorded")
    app.event(
        "run.started",
        "r1",
        name="replayed",
        app=app.app,
        nodeId="agent:replayed",
        instanceId="r1",
        kind="agent",
        implicit=False,
        meta={"argv": ["agent.py"], "cwd": "/srv/app"},
        replayOf="r0",
        forkedAt="tool:search#2",
    )
    runs = thub.wait_for(
        lambda: (
            {r["id"]: r for r in thub.api("GET", "/api/runs")[1]["runs"]}
            if len(thub.api("GET", "/api/runs")[1]["runs"]) == 2
            else None
        ),
        what="both runs",
    )
    assert runs["r1"]["meta"] == {
        "argv": ["agent.py"],
        "cwd": "/srv/app",
        "replayOf": "r0",
        "forkedAt": "tool:search#2",
    }
    assert runs["r0"]["meta"] == {}
    assert thub.api("GET", "/api/runs/r1")[1]["meta"]["replayOf"] == "r0"


def test_node_attempt_events_are_stored_with_the_run(thub):
    app = thub.app()
    app.run_started("r1")
    app.node_started("r1", "tool:search", "i1", input={"q": "x"})
    app.event(
        "node.attempt",
        "r1",
        nodeId="tool:search",
        instanceId="i1",
        attempt=1,
        input={"q": "x"},
        error={"name": "ValueError", "message": "down"},
        durationMs=3.0,
    )
    events = thub.wait_for(
        lambda: [
            e for e in thub.api("GET", "/api/runs/r1/events")[1]["events"] if e["type"] == "node.attempt"
        ],
        what="the node.attempt event",
    )
    assert events[0]["error"] == {"name": "ValueError", "message": "down"} and events[0]["attempt"] == 1
    # It changes no node's status: the call is still running.
    nodes = {n["nodeId"]: n for n in thub.api("GET", "/api/runs/r1")[1]["nodes"]}
    assert nodes["tool:search"]["status"] == "running"
