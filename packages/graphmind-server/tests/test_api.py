"""The control API (docs/api.md) against an in-process hub and frame-level fake apps."""

from __future__ import annotations

import threading

import pytest


def _held(thub, app, run_id="r1", node="tool:lookup", gate="before", **fields):
    app.run_started(run_id) if not any(e["runId"] == run_id for e in app.sent) else None
    app.node_started(run_id, node, f"i{app.seq}", input={"q": "x"})
    paused = app.hold(run_id, node, f"i{app.seq}", gate=gate, **fields)
    gates = thub.wait_for(
        lambda: [
            g for g in thub.gates() if g["gateId"].endswith("-" + paused["gateId"]) and g["runId"] == run_id
        ],
        what="the gate in GET /api/gates",
    )
    return paused, gates[0]


def test_health(thub):
    assert thub.api("GET", "/api/health") == (
        200,
        {"ok": True, "version": "0.1.0", "protocol": 1, "storing": True},
    )


def test_runs_are_listed_newest_first_with_filters_and_limit(thub):
    a, b = thub.app(app="alpha"), thub.app(app="beta")
    # Newest first by when the hub received each run: each is stored before the next is sent.
    for app, run_id, name in ((a, "r1", "first"), (b, "r2", "second"), (a, "r3", "third")):
        app.run_started(run_id, name=name)
        thub.wait_for(lambda r=run_id: thub.api("GET", f"/api/runs/{r}")[0] == 200, what=run_id)
    a.run_finished("r3", status="error", error={"name": "E", "message": "m", "stack": ""})
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 3, what="3 runs")
    runs = thub.api("GET", "/api/runs")[1]["runs"]
    assert [r["id"] for r in runs] == ["r3", "r2", "r1"]
    assert set(runs[0]) == {
        "id",
        "app",
        "name",
        "status",
        "startedAt",
        "endedAt",
        "nodeCount",
        "eventCount",
        "heldCount",
        "clientId",
        "meta",
        "dropped",
        "usage",
        "heldMs",
        "abandonedReason",
        "thread",
        "labels",
    }
    assert runs[0]["abandonedReason"] is None
    assert runs[0]["dropped"] == {"count": 0, "reasons": {}}
    assert runs[0]["status"] == "error" and runs[0]["endedAt"] is not None and runs[1]["endedAt"] is None
    assert [r["id"] for r in thub.api("GET", "/api/runs?app=alpha")[1]["runs"]] == ["r3", "r1"]
    assert [r["id"] for r in thub.api("GET", "/api/runs?status=running")[1]["runs"]] == ["r2", "r1"]
    assert [r["id"] for r in thub.api("GET", "/api/runs?limit=1")[1]["runs"]] == ["r3"]
    for bad in ("limit=0", "limit=1001", "limit=x", "status=done"):
        status, body = thub.api("GET", f"/api/runs?{bad}")
        assert status == 400 and body["error"]


def test_a_run_shows_its_nodes_and_their_latest_status(thub):
    app = thub.app()
    app.run_started("r1", name="agent")
    app.event(
        "graph.hint",
        "r1",
        nodes=[
            {"nodeId": "tool:search", "kind": "tool", "name": "search"},
            {"nodeId": "tool:never", "kind": "tool", "name": "never"},
        ],
    )
    app.node_started("r1", "llm:step", "s1")
    app.node_finished("r1", "llm:step", "s1", output="hi")
    app.node_started("r1", "tool:search", "t1")
    app.event("node.error", "r1", nodeId="tool:search", instanceId="t1", error={"name": "E", "message": "m"})
    app.node_started("r1", "tool:search", "t2")
    app.node_finished("r1", "tool:search", "t2", output=1, injected=True)
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1]["eventCount"] == 8, what="8 events")
    run = thub.api("GET", "/api/runs/r1")[1]
    nodes = {n["nodeId"]: n for n in run["nodes"]}
    assert nodes["agent:agent"] == {
        "nodeId": "agent:agent",
        "kind": "agent",
        "name": "agent",
        "executions": 1,
        "status": "running",
    }
    assert nodes["llm:step"]["status"] == "ok"
    assert nodes["tool:search"] == {
        "nodeId": "tool:search",
        "kind": "tool",
        "name": "search",
        "executions": 2,
        "status": "injected",
    }
    assert nodes["tool:never"]["status"] == "pending" and nodes["tool:never"]["executions"] == 0
    assert run["nodeCount"] == 3
    assert thub.api("GET", "/api/runs/nope")[0] == 404


def test_events_page_by_seq(thub):
    app = thub.app()
    app.run_started("r1")
    for i in range(9):
        app.node_started("r1", "tool:t", f"i{i}")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1]["eventCount"] == 10, what="10 events")
    page = thub.api("GET", "/api/runs/r1/events?limit=4")[1]
    assert [e["seq"] for e in page["events"]] == [1, 2, 3, 4] and page["next"] == 4
    page = thub.api("GET", f"/api/runs/r1/events?after={page['next']}&limit=6")[1]
    assert [e["seq"] for e in page["events"]] == [5, 6, 7, 8, 9, 10] and page["next"] is None
    assert thub.api("GET", "/api/runs/r1/events?limit=5001")[0] == 400
    assert thub.api("GET", "/api/runs/nope/events")[0] == 404


def test_delete_a_run(thub):
    app = thub.app()
    app.run_started("r1")
    app.run_started("r2")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 2, what="2 runs")
    assert thub.api("DELETE", "/api/runs/r1") == (200, {"ok": True})
    assert [r["id"] for r in thub.api("GET", "/api/runs")[1]["runs"]] == ["r2"]
    assert thub.api("GET", "/api/runs/r1/events")[0] == 404
    assert thub.api("DELETE", "/api/runs/r1")[0] == 404


def test_inject_at_a_before_gate_answers_once_the_app_resumed(thub):
    app = thub.app(auto_resume=True)
    paused, gate = _held(thub, app)
    assert gate["runId"] == "r1" and gate["nodeId"] == "tool:lookup" and gate["reason"] == "breakpoint"
    assert gate["gate"] == "before" and gate["actions"] == ["continue", "inject", "abort"]
    assert gate["heldSince"] == paused["ts"]
    assert thub.api("GET", "/api/runs/r1")[1]["heldCount"] == 1
    status, body = thub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "inject", "value": {"a": 1}})
    assert (status, body) == (200, {"ok": True, "gateId": gate["gateId"], "action": "inject"})
    resolve = app.expect("gate.resolve")
    assert resolve == {
        "type": "gate.resolve",
        "gateId": paused["gateId"],
        "action": "inject",
        "value": {"a": 1},
        "answeredBy": "api",  # no X-GraphMind-Via: an API client (effects/answer.py)
    }
    assert thub.gates() == []
    assert thub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0] == 404


def test_the_answer_waits_for_exec_resumed(thub):
    app = thub.app(auto_resume=False)
    paused, gate = _held(thub, app)
    result = {}
    t = threading.Thread(
        target=lambda: result.update(
            r=thub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})
        )
    )
    t.start()
    app.expect("gate.resolve")
    assert "r" not in result
    app.resume(paused, "continue")
    t.join(5)
    assert result["r"][0] == 200


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ("not json", 400),
        ([], 400),
        ({"action": "skip"}, 400),
        ({"action": "inject"}, 400),
        ({"action": "retry"}, 422),
        ({"action": "inject", "value": {"x": ["ok", "a __REDACTED__ b"]}}, 422),
        ({"action": "inject", "value": {"__REDACTED__": 1}}, 422),
    ],
)
def test_bad_answers_are_refused_and_the_gate_stays_held(thub, body, status):
    app = thub.app(auto_resume=True)
    _, gate = _held(thub, app)
    if body == "not json":
        import urllib.request

        req = urllib.request.Request(f"{thub.url}/api/gates/{gate['gateId']}", data=b"{oops", method="POST")
        try:
            urllib.request.urlopen(req, timeout=5)
            got = 200
        except urllib.error.HTTPError as exc:
            got = exc.code
    else:
        got, err = thub.api("POST", f"/api/gates/{gate['gateId']}", body)
        assert err["error"]
    assert got == status
    assert [g["gateId"] for g in thub.gates()] == [gate["gateId"]]


def test_retry_is_taken_at_an_error_gate(thub):
    app = thub.app(auto_resume=True)
    _, gate = _held(thub, app, gate="error", reason="error", error={"name": "ValueError", "message": "boom"})
    assert gate["reason"] == "error" and gate["error"]["message"] == "boom" and "retry" in gate["actions"]
    assert thub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "retry"})[0] == 200


def test_retry_is_taken_at_a_before_gate_held_by_the_loop_guard(thub):
    app = thub.app(auto_resume=True)
    loop = {"repeats": 3, "firstSeq": 1, "lastSeq": 3, "fingerprint": "f" * 64}
    _, gate = _held(thub, app, reason="loop", loop=loop)
    assert gate["actions"] == ["continue", "retry", "inject", "abort"]
    assert thub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "retry"})[0] == 200
    assert app.expect("gate.resolve")["action"] == "retry"


@pytest.mark.parametrize(
    ("reason", "actions"),
    [
        ("breakpoint", ["continue", "retry", "inject", "abort"]),  # an app that lists it anyway
        ("loop", ["continue", "inject", "abort"]),  # an app that does not offer it at a loop hold
    ],
)
def test_retry_is_refused_at_any_other_before_gate(thub, reason, actions):
    app = thub.app(auto_resume=True)
    _, gate = _held(thub, app, reason=reason, actions=actions)
    assert "retry" not in gate["actions"]
    status, err = thub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "retry"})
    assert status == 422 and "does not take 'retry'" in err["error"]
    assert [g["gateId"] for g in thub.gates()] == [gate["gateId"]]


def test_a_gate_the_app_does_not_know_answers_404(thub):
    app = thub.app(auto_resume=True)
    _paused, gate = _held(thub, app)
    app.held.clear()  # the app forgot it (e.g. its pause timeout fired): it answers gate.unknown
    assert thub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0] == 404
    assert thub.gates() == []


def test_gate_ids_are_unique_across_apps(thub):
    a, b = thub.app(auto_resume=True), thub.app(auto_resume=True)
    _pa, ga = _held(thub, a, run_id="ra", gate_id="g1")
    _pb, gb = _held(thub, b, run_id="rb", gate_id="g1")
    assert ga["gateId"] != gb["gateId"]
    assert thub.api("POST", f"/api/gates/{gb['gateId']}", {"action": "continue"})[0] == 200
    assert b.expect("gate.resolve")["gateId"] == "g1"
    assert not [f for f in a.frames if f["type"] == "gate.resolve"]
    assert [g["gateId"] for g in thub.gates()] == [ga["gateId"]]


def test_a_disconnecting_app_takes_its_gates_with_it(thub):
    app = thub.app()
    _, gate = _held(thub, app)
    app.drop()
    thub.wait_for(lambda: thub.gates() == [], what="the gate to go")
    assert thub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0] == 404


def test_put_debug_answers_once_every_app_acknowledged(thub):
    a, b = thub.app(), thub.app()
    status, state = thub.api(
        "PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:lookup", "gate": "before"}]}
    )
    assert status == 200 and "pending" not in state
    assert state["breakpoints"] == [{"nodeId": "tool:lookup", "gate": "before"}] and state["version"] == 1
    for app in (a, b):
        pushed = app.expect("debug.state")
        assert pushed["version"] == 1 and pushed["breakpoints"] == state["breakpoints"]
    status, state = thub.api("PUT", "/api/debug", {"mode": "step", "pauseOnError": "tool"})
    assert (state["mode"], state["pauseOnError"], state["version"]) == ("step", "tool", 2)
    assert state["breakpoints"] == [{"nodeId": "tool:lookup", "gate": "before"}]
    assert thub.api("GET", "/api/debug")[1] == {k: v for k, v in state.items()}
    late = thub.app()
    assert late.welcome["debug"] == state


def test_put_debug_names_an_app_that_does_not_acknowledge(thub):
    quiet = thub.app(auto_ack=False)
    status, state = thub.api("PUT", "/api/debug", {"mode": "step"})
    assert status == 200 and state["pending"] == [quiet.client_id]


@pytest.mark.parametrize(
    "body",
    [
        {"mode": "walk"},
        {"pauseOnError": "sometimes"},
        {"breakpoints": {"nodeId": "x"}},
        {"breakpoints": [{"nodeId": "", "gate": "before"}]},
        {"breakpoints": [{"nodeId": "x", "gate": "middle"}]},
        {"colour": "red"},
        [1],
    ],
)
def test_put_debug_refuses_a_malformed_value_and_changes_nothing(thub, body):
    status, err = thub.api("PUT", "/api/debug", body)
    assert status == 400 and err["error"]
    assert thub.api("GET", "/api/debug")[1]["version"] == 0


def test_debug_state_survives_a_restart_and_pause_on_error_comes_from_the_start_up(make_hub):
    hub = make_hub(pause_on_error="tool")
    assert hub.api("GET", "/api/debug")[1]["pauseOnError"] == "tool"
    hub.api(
        "PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:a", "gate": "after"}], "pauseOnError": "off"}
    )
    hub.restart()
    state = hub.api("GET", "/api/debug")[1]
    assert state["breakpoints"] == [{"nodeId": "tool:a", "gate": "after"}]
    assert state["pauseOnError"] == "tool" and state["version"] == 1


def test_pause_is_sent_to_every_app(thub):
    a, b = thub.app(), thub.app()
    assert thub.api("POST", "/api/pause", {}) == (200, {"ok": True, "pause": {"any": True, "runs": []}})
    assert a.expect("pause")["runId"] is None and b.expect("pause")["runId"] is None
    assert thub.api("POST", "/api/pause", {"runId": "r9"})[1]["pause"] == {"any": True, "runs": ["r9"]}
    assert a.expect("pause")["runId"] == "r9"
    assert thub.api("POST", "/api/pause", {"runId": 5})[0] == 400


def test_an_armed_pause_reaches_an_app_that_attaches_later_and_is_taken_back_from_every_app(thub):
    assert thub.api("POST", "/api/pause", {})[0] == 200
    late = thub.app()
    assert late.expect("pause") == {"type": "pause", "runId": None}
    assert thub.api("DELETE", "/api/pause", {}) == (200, {"ok": True, "pause": {"any": False, "runs": []}})
    assert late.expect("pause.cancel") == {"type": "pause.cancel", "runId": None}
    assert thub.api("GET", "/api/pause") == (200, {"pause": {"any": False, "runs": []}})


def test_abort_a_run(thub):
    app = thub.app()
    app.run_started("r1")
    app.run_started("r2")
    app.run_finished("r2")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 2, what="2 runs")
    assert thub.api("POST", "/api/runs/r1/abort") == (200, {"ok": True})
    assert app.expect("run.abort") == {"type": "run.abort", "runId": "r1"}
    assert thub.api("POST", "/api/runs/r2/abort")[0] == 409
    assert thub.api("POST", "/api/runs/nope/abort")[0] == 404
    app.close()
    assert thub.api("POST", "/api/runs/r1/abort")[0] == 409


def test_unknown_api_routes_answer_json_404(thub):
    status, body = thub.api("GET", "/api/nothing")
    assert status == 404 and "docs/api.md" in body["error"]
