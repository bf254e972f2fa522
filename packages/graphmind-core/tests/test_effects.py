"""Effect classes and safe mode (docs/effects.md): the one rule, hold, simulate, the retry question,
the hub's switch, and the ledger line on each ending. Tools count their real executions."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import graphmind
from graphmind.adapter import NodeSpec, engine_for, framework_effect
from graphmind.testing import FakeHub

Refund: Any = None  # a pydantic model, made by the test that needs it


class Counted:
    """A refund tool and a lookup tool that count how often their bodies really ran."""

    def __init__(self, client: graphmind.Client, **tool_options: Any) -> None:
        self.refunds = 0
        self.lookups = 0

        @client.tool(**tool_options)
        def issue_refund(order_id: str, amount: int) -> dict[str, Any]:
            self.refunds += 1
            return {"refunded": amount}

        @client.tool
        def lookup_order(order_id: str) -> dict[str, Any]:
            self.lookups += 1
            return {"status": "delivered"}

        self.issue_refund, self.lookup_order = issue_refund, lookup_order


def _ended(hub: FakeHub, node_id: str) -> dict[str, Any]:
    return hub.wait_event(lambda e: e["type"] in ("node.finished", "node.error") and e["nodeId"] == node_id)


def _started(hub: FakeHub, node_id: str) -> dict[str, Any]:
    return hub.wait_event(lambda e: e["type"] == "node.started" and e["nodeId"] == node_id)


# ---- the rule ---------------------------------------------------------------------------------------
def _effect(client: graphmind.Client, spec: NodeSpec) -> dict[str, Any]:
    node = engine_for(client).start_node(spec)
    node.finish(None)
    assert node.effect is not None
    return node.effect.wire()


def test_the_rule_explicit_then_framework_then_name_rule_then_unknown() -> None:
    client = graphmind.Client(app="effects", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    try:
        assert _effect(client, NodeSpec("issue_refund")) == {
            "class": "write",
            "source": "name rule",
            "rule": "*refund*",
        }
        assert _effect(client, NodeSpec("lookup_order"))["class"] == "read"
        assert _effect(client, NodeSpec("frobnicate")) == {"class": "unknown", "source": "default"}
        assert _effect(client, NodeSpec("issue_refund", effects="read")) == {
            "class": "read",
            "source": "explicit",
        }
        framework = framework_effect("write", "destructiveHint")
        assert _effect(client, NodeSpec("get_thing", effects=framework)) == {
            "class": "write",
            "source": "framework",
            "hint": "destructiveHint",
        }
        model = engine_for(client).start_node(NodeSpec("step", "llm"))
        assert model.effect is None  # model calls are never effectful
        model.finish(None)
    finally:
        client.dispose()


def test_the_name_rule_reads_its_globs_from_the_environment() -> None:
    env = {"GRAPHMIND_EFFECTS_WRITE": "frob*", "GRAPHMIND_EFFECTS_READ": "peek_*"}
    client = graphmind.Client(app="effects", url="ws://127.0.0.1:9/ingest", retry_interval=3600, environ=env)
    try:
        assert _effect(client, NodeSpec("frobnicate"))["class"] == "write"
        assert _effect(client, NodeSpec("peek_at"))["class"] == "read"
        assert _effect(client, NodeSpec("send_mail"))["class"] == "unknown"  # the defaults are replaced
    finally:
        client.dispose()


def test_a_bad_class_or_mode_is_a_one_line_error() -> None:
    client = graphmind.Client(app="effects", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    try:
        with pytest.raises(ValueError, match="effects= takes 'read' or 'write'"):
            client.tool(effects="maybe")(lambda: None)
    finally:
        client.dispose()
    with pytest.raises(ValueError, match="GRAPHMIND_SAFE"):
        graphmind.Client(app="effects", environ={"GRAPHMIND_SAFE": "hodl"})


# ---- simulate -----------------------------------------------------------------------------------------
def test_simulate_detached_never_runs_the_write_and_runs_the_read() -> None:
    client = graphmind.Client(
        app="effects", url="ws://127.0.0.1:9/ingest", retry_interval=3600, safe="simulate"
    )
    events: list[dict[str, Any]] = []
    client._tap = events.append
    tools = Counted(client, effects_stub={"refunded": 0, "simulated": True})
    try:
        with client.run("refund"):
            assert tools.lookup_order("A1") == {"status": "delivered"}
            assert tools.issue_refund("A1", 20) == {"refunded": 0, "simulated": True}
    finally:
        client.dispose()
    assert (tools.refunds, tools.lookups) == (0, 1)
    ended = next(e for e in events if e["type"] == "node.finished" and e["nodeId"] == "tool:issue_refund")
    assert ended["simulated"] is True and "injected" not in ended
    assert ended["simulatedFrom"] == "stub"
    assert ended["effect"] == {
        "class": "write",
        "source": "name rule",
        "outcome": "simulated",
        "by": "safe mode",
    }
    read = next(e for e in events if e["type"] == "node.finished" and e["nodeId"] == "tool:lookup_order")
    assert "effect" not in read and "simulated" not in read


def test_simulate_builds_a_value_of_the_typed_return() -> None:
    from pydantic import BaseModel

    global Refund  # the return annotation is resolved in this module's globals

    class Refund(BaseModel):  # type: ignore[no-redef]
        refunded: int
        currency: str = "EUR"

    client = graphmind.Client(
        app="effects", url="ws://127.0.0.1:9/ingest", retry_interval=3600, safe="simulate"
    )
    runs = []

    @client.tool
    def issue_refund(amount: int) -> Refund:
        runs.append(amount)
        return Refund(refunded=amount)

    try:
        assert issue_refund(5) == {"refunded": 0, "currency": "EUR"}
    finally:
        client.dispose()
    assert runs == []


def test_simulate_hands_back_the_output_of_the_same_call_that_ran_before(hub: FakeHub) -> None:
    client = graphmind.Client(app="effects", url=hub.url, retry_interval=0.2)
    assert client.ready(5)
    tools = Counted(client)
    try:
        assert tools.issue_refund("A1", 20) == {"refunded": 20}
        hub.set_debug(safe="simulate")
        assert tools.issue_refund("A1", 20) == {"refunded": 20}  # the recorded output for the same input
        assert tools.refunds == 1
        ended = hub.wait_event(lambda e: e["type"] == "node.finished" and e.get("simulated"))
        assert ended["simulatedFrom"] == "recorded"
    finally:
        client.dispose()


# ---- hold ---------------------------------------------------------------------------------------------
def test_hold_holds_a_write_with_reason_effect_and_continue_runs_it_once(hub: FakeHub) -> None:
    client = graphmind.Client(app="effects", url=hub.url, retry_interval=0.2, safe="hold")
    assert client.ready(5)
    tools = Counted(client)
    result: list[Any] = []
    try:
        assert tools.lookup_order("A1") == {"status": "delivered"}  # a read never holds
        worker = threading.Thread(target=lambda: result.append(tools.issue_refund("A1", 20)))
        worker.start()
        paused = hub.next_paused()
        assert paused["reason"] == "effect" and paused["nodeId"] == "tool:issue_refund"
        assert paused["actions"] == ["continue", "inject", "simulate", "abort"]
        assert paused["effect"] == {"class": "write", "source": "name rule", "rule": "*refund*"}
        assert paused["simulateWith"] == "none"
        assert tools.refunds == 0
        hub.resolve(paused["gateId"], "continue", answeredBy="viewer")
        worker.join(5)
    finally:
        client.dispose()
    assert result == [{"refunded": 20}] and tools.refunds == 1
    resumed = hub.wait_event(lambda e: e["type"] == "exec.resumed")
    assert resumed["answeredBy"] == "viewer"
    ended = _ended(hub, "tool:issue_refund")
    assert ended["effect"] == {
        "class": "write",
        "source": "name rule",
        "outcome": "held then ran",
        "by": "viewer",
    }


def test_hold_answered_simulate_with_the_hubs_value_and_remember_it(hub: FakeHub) -> None:
    client = graphmind.Client(app="effects", url=hub.url, retry_interval=0.2, safe="hold")
    assert client.ready(5)
    tools = Counted(client)
    hub.auto_answer(lambda paused: ("simulate", {"refunded": 99}, {"remember": True}))
    try:
        assert tools.issue_refund("A1", 20) == {"refunded": 99}
        hub.auto_answer("simulate")
        assert tools.issue_refund("B2", 5) == {"refunded": 99}  # the remembered stub
    finally:
        client.dispose()
    assert tools.refunds == 0
    hub.wait_for(lambda: len(hub.of_type("node.finished")) == 2)
    simulated = [e for e in hub.of_type("node.finished") if e.get("simulated")]
    assert [e["simulatedFrom"] for e in simulated] == ["hub", "stub"]


def test_an_effect_hold_nobody_answers_is_simulated_not_run(hub: FakeHub) -> None:
    client = graphmind.Client(app="effects", url=hub.url, retry_interval=0.2, safe="hold", pause_timeout=0.2)
    assert client.ready(5)
    tools = Counted(client)
    try:
        assert tools.issue_refund("A1", 20) is None
    finally:
        client.dispose()
    assert tools.refunds == 0
    assert _ended(hub, "tool:issue_refund")["effect"]["by"] == "timeout"


def test_abort_at_an_effect_hold_skips_the_write(hub: FakeHub) -> None:
    client = graphmind.Client(app="effects", url=hub.url, retry_interval=0.2, safe="hold")
    assert client.ready(5)
    tools = Counted(client)
    hub.auto_answer("abort")
    try:
        with pytest.raises(graphmind.RunAborted), client.run("r"):
            tools.issue_refund("A1", 20)
    finally:
        client.dispose()
    assert tools.refunds == 0
    assert _ended(hub, "tool:issue_refund")["effect"]["outcome"] == "skipped"


def test_unknown_calls_are_held_only_with_safe_unknown(hub: FakeHub) -> None:
    client = graphmind.Client(app="effects", url=hub.url, retry_interval=0.2, safe="simulate")
    assert client.ready(5)
    runs: list[int] = []
    frob = client.wrap(lambda: runs.append(1) or "real", name="frobnicate")
    try:
        assert frob() == "real"
        hub.set_debug(safe_unknown=True)
        assert frob() == "real"  # the recorded output of the same call: not run again
    finally:
        client.dispose()
    assert runs == [1]
    hub.wait_for(lambda: len(hub.of_type("node.finished")) == 2)
    assert [e.get("simulatedFrom") for e in hub.of_type("node.finished")] == [None, "recorded"]


def test_the_hubs_switch_reaches_an_attached_app(hub: FakeHub, client: graphmind.Client) -> None:
    tools = Counted(client)
    assert tools.issue_refund("A1", 1) == {"refunded": 1}  # the app's own mode: off
    hub.set_debug(safe="hold")
    hub.auto_answer("simulate")
    assert tools.issue_refund("A1", 1) == {"refunded": 1}  # simulated: the output of the same call
    assert tools.issue_refund("A1", 2) is None  # simulated: nothing known of this one
    assert tools.refunds == 1
    assert hub.of_type("exec.paused")[0]["reason"] == "effect"
    hub.auto_answer(None)
    assert hub.hellos[0]["safe"] == {"mode": "off", "unknown": False}


def test_retry_of_a_write_that_ran_asks_first(hub: FakeHub, client: graphmind.Client) -> None:
    tools = Counted(client)
    hub.set_debug(breakpoints=[("tool:issue_refund", "after")])
    answers = iter(["retry", "simulate"])
    hub.auto_answer(lambda paused: (next(answers), None))
    assert tools.issue_refund("A1", 20) is None
    assert tools.refunds == 1  # asked again, answered simulate: the body did not run twice
    asked = hub.of_type("exec.paused")[1]
    assert asked["reason"] == "effect" and asked["ranBefore"] == 1
    assert asked["why"] == "this call already ran once: run it again?"
    ended = _ended(hub, "tool:issue_refund")
    assert ended["simulated"] is True and ended["simulatedFrom"] == "none"


def test_an_observe_only_write_is_never_marked_simulated_when_it_ran() -> None:
    """A node the adapter only observes (no inject: the framework runs the call) cannot be simulated:
    it runs, warned, and its ledger line says so (never a "simulated" that ran)."""
    client = graphmind.Client(
        app="effects", url="ws://127.0.0.1:9/ingest", retry_interval=3600, safe="simulate"
    )
    events: list[dict[str, Any]] = []
    client._tap = events.append
    runs: list[int] = []
    try:
        spec = NodeSpec("send_mail", actions=("continue", "abort"))
        assert engine_for(client).execute(spec, lambda: runs.append(1) or "sent") == "sent"
    finally:
        client.dispose()
    assert runs == [1]
    ended = next(e for e in events if e["type"] == "node.finished")
    assert "simulated" not in ended and ended["effect"]["outcome"] == "ran"


def test_an_inject_after_a_write_ran_says_it_ran(hub: FakeHub, client: graphmind.Client) -> None:
    tools = Counted(client)
    hub.set_debug(breakpoints=[("tool:issue_refund", "after")])
    hub.auto_answer("inject", {"refunded": 0})
    assert tools.issue_refund("A1", 20) == {"refunded": 0}
    assert tools.refunds == 1
    assert _ended(hub, "tool:issue_refund")["effect"]["outcome"] == "ran"
