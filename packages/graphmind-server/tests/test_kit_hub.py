"""KitHub (graphmind_server.testing): the gate-matrix kit's hub over a running hub, driven only
through the viewer's live feed and the control API. Here on the in-thread hub with frame-level
FakeApps; the adapters' tests run the whole kit with it against the hub process."""

from __future__ import annotations

from typing import Any

import pytest

from graphmind_server.testing import FakeApp, HubRefused, KitHub


def held_gate(app: FakeApp, kit: KitHub, gate_id: str = "g-1", gate: str = "before") -> dict[str, Any]:
    paused = app.hold("r1", "tool:search", "i1", gate=gate, gate_id=gate_id)
    kit.wait_event(lambda e: e.get("type") == "exec.paused" and e.get("gateId") == gate_id)
    return paused


def test_events_are_the_stored_events_seen_after_entering(thub: Any) -> None:
    app = thub.app()
    with KitHub(thub) as first:
        sent = app.node_started("r1", "tool:search", "i1", input={"q": "cats"})
        assert first.wait_event(lambda e: e.get("type") == "node.started") == sent
    with KitHub(thub) as second:
        app.node_finished("r1", "tool:search", "i1", output="dogs")
        second.wait_event(lambda e: e.get("type") == "node.finished")
        assert second.of_type("node.started") == [], "a KitHub sees only what was stored after it entered"


def test_set_debug_reaches_the_app_and_entering_resets_it(thub: Any) -> None:
    app = thub.app()
    with KitHub(thub) as kit:
        kit.set_debug(breakpoints=[("tool:search", "after")], mode="step", pause_on_error="on")
        # wait_ack: the PUT answered once the app acknowledged, so the app holds the new state now.
        assert app.debug["breakpoints"] == [{"nodeId": "tool:search", "gate": "after"}]
        assert kit.debug["mode"] == "step" == thub.api("GET", "/api/debug")[1]["mode"]
        kit.set_debug(mode="run", wait_ack=False)
        assert kit.debug["mode"] == "run"
        with pytest.raises(ValueError, match="400"):
            kit.set_debug(breakpoints=[("tool:search", "sideways")])
    with KitHub(thub):
        state = thub.api("GET", "/api/debug")[1]
        assert (state["breakpoints"], state["mode"], state["pauseOnError"]) == ([], "run", "off")


def test_auto_answer_answers_through_the_control_api(thub: Any) -> None:
    app = thub.app(auto_resume=True)
    with KitHub(thub) as kit:
        seen: list[dict[str, Any]] = []

        def answer(paused: dict[str, Any]) -> tuple[str, Any]:
            seen.append(paused)
            return ("inject", {"content": "from the kit"})

        kit.auto_answer(answer)
        paused = held_gate(app, kit)
        resolve = app.expect("gate.resolve")
        assert (resolve["gateId"], resolve["action"], resolve["value"]) == (
            "g-1",
            "inject",
            {"content": "from the kit"},
        )
        kit.wait_for(lambda: not kit.held, what="the gate released")
        assert seen == [paused], "the answer function gets the app's exec.paused"
        kit.wait_event(lambda e: e.get("type") == "exec.resumed")


@pytest.mark.parametrize("by", ["app", "hub"])
def test_resolve_takes_the_apps_gate_id_or_the_hubs(thub: Any, by: str) -> None:
    app = thub.app(auto_resume=True)
    with KitHub(thub) as kit:
        held_gate(app, kit, gate="after")
        (hub_id,) = kit.held
        assert hub_id != "g-1" and hub_id.endswith("-g-1")  # the hub's id is <connectionId>-<app's id>
        kit.resolve("g-1" if by == "app" else hub_id, "retry", wait=True)
        assert app.expect("gate.resolve")["action"] == "retry"
        assert thub.gates() == []


def test_a_refused_answer_fails_the_next_wait_with_the_hubs_words(thub: Any) -> None:
    app = thub.app(auto_resume=True)
    kit = KitHub(thub)
    with pytest.raises(HubRefused, match=r"422.*does not take 'retry'"), kit:
        held_gate(app, kit)
        kit.resolve("g-1", "retry")  # a before gate takes no retry: the hub answers 422
        kit.wait_for(lambda: False, timeout=10, what="never")
    assert len(thub.gates()) == 1, "the refused answer reached no app: the gate is still held"
    # At exit too, when nothing waited after the refusal.
    kit = KitHub(thub)
    with pytest.raises(HubRefused, match="422"), kit:
        kit.resolve(thub.gates()[0]["gateId"], "retry")


def test_a_gate_id_two_apps_share_is_refused_as_ambiguous(thub: Any) -> None:
    one, two = thub.app(), thub.app()
    with KitHub(thub) as kit:
        one.hold("r1", "tool:a", "i1", gate_id="g-1")
        two.hold("r2", "tool:b", "i2", gate_id="g-1")
        kit.wait_for(lambda: len(kit.held) == 2, what="two held gates")
        with pytest.raises(AssertionError, match="names 2 held gates"):
            kit.resolve("g-1", "continue", wait=True)
        kit.errors.clear()


def test_the_feed_closing_fails_the_wait_at_once(thub: Any) -> None:
    kit = KitHub(thub)
    with pytest.raises(HubRefused, match="live feed closed"), kit:
        thub.handle.stop()
        kit.wait_for(lambda: False, timeout=30, what="never")
