"""The viewer's page against an in-memory stand-in for the hub's API: exact frames in, exact
requests out. What needs a real app (inject, continue, retry, abort) is in test_gates_live.py."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from _runs import run_row, synthetic_events
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def gate(gate_id: str, **over: Any) -> dict[str, Any]:
    g = {
        "gateId": gate_id,
        "runId": "r1",
        "nodeId": "tool:search",
        "instanceId": f"i-{gate_id}",
        "kind": "tool",
        "name": "search",
        "gate": "before",
        "reason": "breakpoint",
        "actions": ["continue", "inject", "abort"],
        "input": {"q": "lisbon"},
        "output": None,
        "error": None,
        "loop": None,
        "heldSince": time.time() * 1000,
    }
    g.update(over)
    return g


def small_run(stub: Any) -> None:
    ev = synthetic_events("r1", 40, name="small")
    stub.add_run(run_row("r1", ev, name="small"), ev)


def test_page_loads_with_favicon_and_nothing_from_other_hosts(stub_hub: Any, make_page: Any) -> None:
    small_run(stub_hub)
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/")
    expect(page.locator("#conn")).to_have_text("live")
    expect(page.locator(".run-item")).to_have_count(1)
    assert page.evaluate("() => fetch('/favicon.svg').then(r => r.status)") == 200
    expect(page.get_by_role("button", name="Keyboard shortcuts")).to_be_visible()


def test_the_graph_shows_agent_model_and_tools_with_counts_and_states_in_words(
    stub_hub: Any, make_page: Any
) -> None:
    small_run(stub_hub)
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/#/run/r1")
    page.wait_for_selector("body[data-run-loaded=true]")
    agent = page.locator(".gnode[data-node-id='agent:small']")
    step = page.locator(".gnode[data-node-id='llm:step']")
    weather = page.locator(".gnode[data-node-id='tool:weather']")  # hinted, never ran
    expect(agent).to_contain_text("×1")
    expect(step).to_contain_text("ok")
    expect(weather).to_contain_text("pending")
    expect(weather).to_contain_text("×0")
    assert "state-pending" in (weather.get_attribute("class") or "")
    # Layout: agent above the model step above the tools.
    ya = agent.bounding_box()["y"]
    ys = step.bounding_box()["y"]
    yt = weather.bounding_box()["y"]
    assert ya < ys < yt
    n_steps = sum(
        1 for e in stub_hub.events["r1"] if e["type"] == "node.started" and e["nodeId"] == "llm:step"
    )
    expect(step).to_contain_text(f"×{n_steps}")


def test_several_held_gates_are_listed_oldest_first_with_reasons_in_words(
    stub_hub: Any, make_page: Any
) -> None:
    small_run(stub_hub)
    now = time.time() * 1000
    stub_hub.gates = [
        gate(
            "g2",
            heldSince=now - 1000,
            reason="loop",
            loop={"repeats": 3, "firstSeq": 1, "lastSeq": 9, "fingerprint": "ab"},
        ),
        gate("g1", heldSince=now - 5000, reason="step", nodeId="llm:step", kind="llm", name="step"),
        gate(
            "g3",
            heldSince=now,
            reason="error",
            gate="error",
            actions=["continue", "retry", "inject", "abort"],
            error={"name": "ValueError", "message": "boom"},
        ),
    ]
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/")
    cards = page.locator(".gate-card")
    expect(cards).to_have_count(3)
    expect(cards.nth(0).locator(".gate-reason")).to_have_text("Step")
    expect(cards.nth(1).locator(".gate-reason")).to_have_text("Loop: 3× search with identical arguments")
    expect(cards.nth(2).locator(".gate-reason")).to_have_text("Error: boom")
    expect(cards.nth(0).get_by_role("button", name="Retry", exact=True)).to_have_count(0)
    expect(cards.nth(2).get_by_role("button", name="Retry", exact=True)).to_have_count(1)
    for name in ("Continue", "Inject", "Abort"):
        expect(cards.nth(0).get_by_role("button", name=name, exact=True)).to_be_visible()
    # A live gate.held joins the list; a gate.released leaves it.
    stub_hub.push({"type": "gate.held", "gate": gate("g4", heldSince=now + 10, reason="pause")})
    expect(cards).to_have_count(4)
    expect(cards.nth(3).locator(".gate-reason")).to_have_text("Paused")
    stub_hub.push({"type": "gate.released", "gateId": "g1", "runId": "r1", "action": "continue", "by": "hub"})
    expect(cards).to_have_count(3)
    expect(page.locator(".run-item .held-badge")).to_have_text("3 held")
    expect(page).to_have_title("(3 held) GraphMind")


def test_inject_refuses_invalid_json_and_redacted_values_and_sends_nothing(
    stub_hub: Any, make_page: Any
) -> None:
    small_run(stub_hub)
    stub_hub.gates = [gate("g1", input={"q": "lisbon", "apiKey": "__REDACTED__"})]
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/")
    card = page.locator(".gate-card")
    expect(card.locator(".hidden-chip")).to_have_text(
        "hidden by GRAPHMIND_HIDE_INPUTS or GRAPHMIND_HIDE_TOOL_ARGS"
    )
    card.get_by_role("button", name="Inject").click()
    expect(card).to_have_attribute("data-inject-ready", "true")
    box = page.get_by_label("Inject value (JSON)")
    # Prefilled with the node's last output (the shape the gate expects back), never the input.
    assert json.loads(box.input_value()) == {"result": "answer 4"}
    box.fill('{"q": "lisbon", "apiKey": "__REDACTED__"}')
    page.get_by_role("button", name="Send").click()
    expect(card.locator(".gate-msg")).to_contain_text("__REDACTED__")
    box.fill("{not json")
    page.get_by_role("button", name="Send").click()
    expect(card.locator(".gate-msg")).to_contain_text("not valid JSON")
    assert [r for r in stub_hub.requests if r[1].startswith("/api/gates")] == []
    box.fill('{"q": "porto"}')
    page.get_by_role("button", name="Send").click()
    expect(card).to_have_count(0)
    assert stub_hub.requests[-1] == ("POST", "/api/gates/g1", {"action": "inject", "value": {"q": "porto"}})


def test_inject_at_an_error_gate_is_prefilled_with_null_and_after_gate_with_the_output(
    stub_hub: Any, make_page: Any
) -> None:
    small_run(stub_hub)  # a held gate's run exists on a real hub; tool:book never finished in it
    stub_hub.gates = [
        gate(
            "e1",
            nodeId="tool:book",
            name="book",
            gate="error",
            reason="error",
            error={"name": "E", "message": "x"},
            actions=["continue", "retry", "inject", "abort"],
        ),
        gate(
            "a1",
            gate="after",
            reason="breakpoint",
            output={"hits": [1, 2]},
            actions=["continue", "retry", "inject", "abort"],
        ),
    ]
    stub_hub.gates[0]["heldSince"] -= 10
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/")
    cards = page.locator(".gate-card")
    cards.nth(0).get_by_role("button", name="Inject").click()
    expect(cards.nth(0)).to_have_attribute("data-inject-ready", "true")
    assert cards.nth(0).get_by_label("Inject value (JSON)").input_value() == "null"
    cards.nth(1).get_by_role("button", name="Inject").click()
    expect(cards.nth(1)).to_have_attribute("data-inject-ready", "true")
    assert '"hits"' in cards.nth(1).get_by_label("Inject value (JSON)").input_value()


def test_node_detail_shows_ran_and_held_time_usage_and_hidden_chips(stub_hub: Any, make_page: Any) -> None:
    t = time.time() * 1000
    ev = [
        {
            "seq": 1,
            "ts": t,
            "runId": "r2",
            "type": "run.started",
            "name": "red",
            "app": "a",
            "nodeId": "agent:red",
            "instanceId": "r2",
            "kind": "agent",
            "meta": {},
            "implicit": False,
        },
        {
            "seq": 2,
            "ts": t + 1,
            "runId": "r2",
            "type": "node.started",
            "nodeId": "tool:lookup",
            "instanceId": "c1",
            "kind": "tool",
            "name": "lookup",
            "parentInstanceId": "r2",
            "input": "__REDACTED__",
            "redaction": {"count": 1, "keys": ["input"]},
        },
        {
            "seq": 3,
            "ts": t + 900,
            "runId": "r2",
            "type": "node.finished",
            "nodeId": "tool:lookup",
            "instanceId": "c1",
            "kind": "tool",
            "name": "lookup",
            "output": "__REDACTED__",
            "durationMs": 900.0,
            "heldMs": 600.0,
        },
        {
            "seq": 4,
            "ts": t + 901,
            "runId": "r2",
            "type": "node.started",
            "nodeId": "llm:step",
            "instanceId": "i:s1",
            "kind": "llm",
            "name": "step",
            "parentInstanceId": "r2",
            "input": {"messages": []},
        },
        {
            "seq": 5,
            "ts": t + 902,
            "runId": "r2",
            "type": "node.token",
            "nodeId": "llm:step",
            "instanceId": "i:s1",
            "deltas": [{"t": "text", "v": "", "chars": 5}],
            "redaction": {"count": 1, "keys": ["deltas"]},
        },
        {
            "seq": 6,
            "ts": t + 950,
            "runId": "r2",
            "type": "node.finished",
            "nodeId": "llm:step",
            "instanceId": "i:s1",
            "output": "__REDACTED__",
            "durationMs": 49.0,
            "heldMs": 0,
            "usage": {"inputTokens": 7, "outputTokens": 5, "totalTokens": 12},
        },
        {
            "seq": 7,
            "ts": t + 960,
            "runId": "r2",
            "type": "node.started",
            "nodeId": "tool:dump",
            "instanceId": "c2",
            "kind": "tool",
            "name": "dump",
            "parentInstanceId": "r2",
            "input": {},
        },
        {
            "seq": 8,
            "ts": t + 970,
            "runId": "r2",
            "type": "node.finished",
            "nodeId": "tool:dump",
            "instanceId": "c2",
            "kind": "tool",
            "name": "dump",
            "durationMs": 10.0,
            "heldMs": 0,
            "output": {"$graphmind": "truncated", "bytes": 734003, "preview": '[{"row": 1}'},
        },
    ]
    stub_hub.add_run(run_row("r2", ev, name="red"), ev)
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/#/run/r2/node/tool:lookup")
    detail = page.locator("#detail")
    expect(detail.locator("h2")).to_have_text("lookup")
    expect(detail.locator(".d-ran")).to_have_text("300 ms")
    expect(detail.locator(".d-held")).to_have_text("600 ms")
    chips = detail.locator(".hidden-chip")
    expect(chips).to_have_count(2)
    expect(chips.nth(0)).to_have_text("hidden by GRAPHMIND_HIDE_INPUTS or GRAPHMIND_HIDE_TOOL_ARGS")
    expect(chips.nth(1)).to_have_text("hidden by GRAPHMIND_HIDE_OUTPUTS or GRAPHMIND_HIDE_TOOL_RESULTS")
    page.locator(".gnode[data-node-id='llm:step']").click()
    expect(detail.locator("h2")).to_have_text("step")
    expect(detail.locator(".d-usage")).to_have_text("7 in · 5 out · 12 total")
    expect(detail.locator(".hidden-chip").first).to_have_text("hidden by GRAPHMIND_HIDE_OUTPUTS")
    expect(detail).to_contain_text("5 characters")
    page.locator(".gnode[data-node-id='tool:dump']").click()
    # The detail shows the new node first: until then `.chip` would match the step's two chips,
    # and a locator matching two elements fails at once instead of waiting (strict mode).
    expect(detail.locator("h2")).to_have_text("dump")
    expect(detail.locator(".chip")).to_have_text("truncated in the app: 717 KB")
    expect(detail.locator(".j-preview")).to_have_text('[{"row": 1}')


def test_debug_controls_and_keyboard_go_through_the_api(stub_hub: Any, make_page: Any) -> None:
    small_run(stub_hub)
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/#/run/r1/node/tool:search")
    page.wait_for_selector("body[data-run-loaded=true]")
    page.get_by_role("button", name="Step mode").click()
    expect(page.get_by_role("button", name="Step mode")).to_have_attribute("aria-pressed", "true")
    page.get_by_label("Pause on error").select_option("tool")
    page.get_by_label("Break before").check()
    expect(page.locator(".gnode[data-node-id='tool:search'] .g-bp")).to_have_text("●")
    page.get_by_role("button", name="Pause", exact=True).click()
    expect(page.locator(".debug-msg")).to_contain_text("armed: the next gate")
    page.keyboard.press("m")
    expect(page.get_by_role("button", name="Step mode")).to_have_attribute("aria-pressed", "false")
    puts = [r[2] for r in stub_hub.requests if r[0] == "PUT"]
    assert puts[:3] == [
        {"mode": "step"},
        {"pauseOnError": "tool"},
        {"breakpoints": [{"nodeId": "tool:search", "gate": "before"}]},
    ]
    assert puts[3] == {"mode": "run"}
    assert ("POST", "/api/pause", {}) in stub_hub.requests
    # `s` turns step mode on; with it on and a gate held, `s` continues the oldest gate.
    page.keyboard.press("s")
    expect(page.get_by_role("button", name="Step mode")).to_have_attribute("aria-pressed", "true")
    stub_hub.push({"type": "gate.held", "gate": gate("k1")})
    expect(page.locator(".gate-card")).to_have_count(1)
    page.keyboard.press("s")
    expect(page.locator(".gate-card")).to_have_count(0)
    assert stub_hub.requests[-1] == ("POST", "/api/gates/k1", {"action": "continue"})
    stub_hub.push({"type": "gate.held", "gate": gate("k2")})
    expect(page.locator(".gate-card")).to_have_count(1)
    page.keyboard.press("c")
    expect(page.locator(".gate-card")).to_have_count(0)
    assert stub_hub.requests[-1] == ("POST", "/api/gates/k2", {"action": "continue"})


def test_help_overlay_lists_the_shortcuts(stub_hub: Any, make_page: Any) -> None:
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Continue the oldest held gate")
    expect(dialog).to_contain_text(re.compile(r"Step: turn step mode on"))
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


def test_runs_list_is_live_newest_first_and_filters(stub_hub: Any, make_page: Any) -> None:
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/")
    expect(page.locator("#conn")).to_have_text("live")
    t = time.time() * 1000
    for i, (app, status) in enumerate([("alpha", "finished"), ("beta", "running"), ("alpha", "error")]):
        stub_hub.push(
            {
                "type": "run",
                "run": {
                    "id": f"x{i}",
                    "app": app,
                    "name": f"run{i}",
                    "status": status,
                    "startedAt": t + i,
                    "endedAt": None if status == "running" else t + i + 5,
                    "nodeCount": 1,
                    "eventCount": 1,
                    "heldCount": 0,
                    "clientId": "c",
                    "meta": {},
                },
            }
        )
    items = page.locator(".run-item .run-name")
    expect(items).to_have_text(["run2", "run1", "run0"])
    page.get_by_label("Filter by app").select_option("alpha")
    expect(items).to_have_text(["run2", "run0"])
    page.get_by_label("Filter by status").select_option("error")
    expect(items).to_have_text(["run2"])


def test_the_feed_reconnects_after_a_hub_restart_and_catches_up(stub_hub: Any, make_page: Any) -> None:
    t = time.time() * 1000
    ev = synthetic_events("r3", 10, name="live", t0=t)[:4]  # started, hint, one step started + a token
    row = {**run_row("r3", ev, name="live"), "status": "running", "endedAt": None}
    stub_hub.add_run(row, ev)
    page = make_page(stub_hub.url, allow_console_errors=True)  # the dropped socket logs an error
    page.goto(stub_hub.url + "/#/run/r3")
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator("#conn")).to_have_text("live")
    stub_hub.push(
        {
            "type": "event",
            "runId": "r3",
            "event": {
                "seq": 5,
                "ts": t + 5,
                "runId": "r3",
                "type": "node.started",
                "nodeId": "tool:search",
                "instanceId": "c9",
                "kind": "tool",
                "name": "search",
                "input": {"q": 1},
            },
        }
    )
    search = page.locator(".gnode[data-node-id='tool:search']")
    expect(search).to_contain_text("running")
    port = stub_hub.port
    stub_hub.stop()
    expect(page.locator("#conn")).to_contain_text("offline")
    # While the hub is down an event is stored (the app replays it on reconnect); the page must get it.
    stub_hub.push(
        {
            "type": "event",
            "runId": "r3",
            "event": {
                "seq": 6,
                "ts": t + 6,
                "runId": "r3",
                "type": "node.finished",
                "nodeId": "tool:search",
                "instanceId": "c9",
                "kind": "tool",
                "name": "search",
                "output": 1,
                "durationMs": 1.0,
                "heldMs": 0,
            },
        }
    )
    stub_hub.start(port=port)
    expect(page.locator("#conn")).to_have_text("live", timeout=15_000)
    expect(search).to_contain_text("ok")
    assert stub_hub.connects[-1] is not None and int(stub_hub.connects[-1]) >= 1


def test_ungated_error_and_aborted_states_read_in_words(stub_hub: Any, make_page: Any) -> None:
    t = time.time() * 1000
    base = {"runId": "r4"}
    ev = [
        {
            "seq": 1,
            "ts": t,
            "type": "run.started",
            "name": "mixed",
            "app": "a",
            "nodeId": "agent:mixed",
            "instanceId": "r4",
            "kind": "agent",
            "meta": {},
            "implicit": False,
        },
        {
            "seq": 2,
            "ts": t + 1,
            "type": "graph.hint",
            "nodes": [
                {
                    "nodeId": "tool:web_search",
                    "kind": "tool",
                    "name": "web_search",
                    "ungated": True,
                    "providerExecuted": True,
                },
                {"nodeId": "tool:fetch", "kind": "tool", "name": "fetch"},
            ],
        },
        {
            "seq": 3,
            "ts": t + 2,
            "type": "node.started",
            "nodeId": "tool:web_search",
            "instanceId": "p1",
            "kind": "tool",
            "name": "web_search",
            "input": {"q": "x"},
            "ungated": True,
            "providerExecuted": True,
        },
        {
            "seq": 4,
            "ts": t + 3,
            "type": "node.finished",
            "nodeId": "tool:web_search",
            "instanceId": "p1",
            "kind": "tool",
            "name": "web_search",
            "output": [],
            "durationMs": 1.0,
            "heldMs": 0,
            "ungated": True,
        },
        {
            "seq": 5,
            "ts": t + 4,
            "type": "node.started",
            "nodeId": "tool:fetch",
            "instanceId": "f1",
            "kind": "tool",
            "name": "fetch",
            "input": {"url": "http://example.invalid"},
        },
        {
            "seq": 6,
            "ts": t + 5,
            "type": "node.error",
            "nodeId": "tool:fetch",
            "instanceId": "f1",
            "kind": "tool",
            "name": "fetch",
            "error": {"name": "TimeoutError", "message": "took too long", "stack": "trace"},
            "durationMs": 1.0,
            "heldMs": 0,
        },
        {"seq": 7, "ts": t + 6, "type": "run.finished", "status": "aborted", "durationMs": 6.0},
    ]
    ev = [{**base, **e} for e in ev]
    stub_hub.add_run({**run_row("r4", ev, name="mixed"), "status": "aborted"}, ev)
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/#/run/r4/node/tool:fetch")
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator(".gnode[data-node-id='tool:web_search'] .g-state")).to_have_text("ok · ungated")
    expect(page.locator(".gnode[data-node-id='tool:fetch'] .g-state")).to_have_text("error")
    expect(page.locator(".gnode[data-node-id='agent:mixed'] .g-state")).to_have_text("aborted")
    expect(page.locator("#detail .d-error")).to_have_text("TimeoutError: took too long")
    expect(page.locator(".run-head .status")).to_have_text("aborted")
    expect(page.get_by_role("button", name="Stop run")).to_have_count(0)  # only a running run


def test_abort_run_and_pause_this_run_buttons_post_to_the_hub(stub_hub: Any, make_page: Any) -> None:
    ev = synthetic_events("r5", 12, name="busy")[:6]
    stub_hub.add_run({**run_row("r5", ev, name="busy"), "status": "running", "endedAt": None}, ev)
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/#/run/r5")
    page.wait_for_selector("body[data-run-loaded=true]")
    page.get_by_role("button", name="Hold this run").click()
    expect(page.locator(".debug-msg")).to_contain_text("armed: the next gate")
    page.get_by_role("button", name="Stop run").click()
    expect(page.locator(".run-msg")).to_contain_text("Abort sent")
    assert ("POST", "/api/pause", {"runId": "r5"}) in stub_hub.requests
    assert ("POST", "/api/runs/r5/abort", {}) in stub_hub.requests


def test_r_retries_and_i_opens_inject_on_the_oldest_gate(stub_hub: Any, make_page: Any) -> None:
    small_run(stub_hub)  # the held gates' run: the page opens it
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/")
    expect(page.locator("#conn")).to_have_text("live")
    stub_hub.push(
        {
            "type": "gate.held",
            "gate": gate(
                "e1",
                gate="error",
                reason="error",
                error={"name": "E", "message": "x"},
                actions=["continue", "retry", "inject", "abort"],
            ),
        }
    )
    expect(page.locator(".gate-card")).to_have_count(1)
    page.keyboard.press("r")
    expect(page.locator(".gate-card")).to_have_count(0)
    assert stub_hub.requests[-1] == ("POST", "/api/gates/e1", {"action": "retry"})
    stub_hub.push({"type": "gate.held", "gate": gate("b1")})
    expect(page.locator(".gate-card")).to_have_count(1)
    page.keyboard.press("r")  # a before gate takes no retry: nothing is sent
    page.keyboard.press("i")
    box = page.get_by_label("Inject value (JSON)")
    expect(box).to_be_focused()
    # fill() selects, then inserts: a prefill landing in between would leave its text before ours
    expect(page.locator(".gate-card")).to_have_attribute("data-inject-ready", "true")
    box.fill("[1, 2]")
    box.press("Control+Enter")
    expect(page.locator(".gate-card")).to_have_count(0)
    assert [r for r in stub_hub.requests if r[1] == "/api/gates/b1"] == [
        ("POST", "/api/gates/b1", {"action": "inject", "value": [1, 2]})
    ]


def test_a_hub_that_cannot_store_shows_not_storing_with_its_reason_until_it_stores_again(
    stub_hub: Any, make_page: Any
) -> None:
    small_run(stub_hub)
    page = make_page(stub_hub.url)
    page.goto(stub_hub.url + "/")
    expect(page.locator("#conn")).to_have_text("live")
    expect(page.locator("#storing")).to_be_hidden()
    stub_hub.push({"type": "storing", "storing": False, "reason": "disk full (database or disk is full)"})
    expect(page.locator("#storing")).to_have_text("not storing: disk full (database or disk is full)")
    stub_hub.push({"type": "storing", "storing": True, "reason": None})
    expect(page.locator("#storing")).to_be_hidden()
