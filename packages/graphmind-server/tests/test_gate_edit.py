"""The hub's checks of an answer's `input` / `reload` (hub/gate_edit.py) on gates as apps describe them,
an app older than the edit fields included (it sends none: never editable)."""

from __future__ import annotations

from typing import Any

import pytest

from graphmind_server.hub.connections import Gate
from graphmind_server.hub.gate_edit import EditRefused, edit_fields


def _gate(**event: Any) -> Gate:
    base = {"gate": "before", "reason": "breakpoint", "actions": ["continue", "inject", "abort"]}
    return Gate("c1-g1", None, "g1", "run", {**base, **event}, 0.0)  # type: ignore[arg-type]


def test_an_app_that_predates_edits_is_never_sent_an_input() -> None:
    gate = _gate(input={"q": "x"})
    api = gate.to_api()
    assert api["editable"] is False and api["reloadable"] is False and api["attempt"] == 1
    assert api["notEditable"] == "this app's GraphMind is too old to take an edited input"
    with pytest.raises(EditRefused, match="too old") as refused:
        edit_fields(gate, {"action": "continue", "input": {"q": "y"}})
    assert refused.value.status == 422


def test_the_fields_go_out_only_with_the_answers_that_take_them() -> None:
    before = _gate(editable=True, reloadable=True)
    assert edit_fields(before, {"action": "continue", "input": None}) == {"input": None}  # null is an input
    assert edit_fields(before, {"action": "continue", "reload": True}) == {"reload": True}
    assert edit_fields(before, {"action": "continue"}) == {}
    error = _gate(gate="error", editable=True, actions=["continue", "retry", "inject", "abort"])
    assert edit_fields(error, {"action": "retry", "input": [1]}) == {"input": [1]}
    with pytest.raises(EditRefused, match="not continue at the error gate"):
        edit_fields(error, {"action": "continue", "input": [1]})
    with pytest.raises(EditRefused, match="reload does not apply here: this app's GraphMind is too old"):
        edit_fields(error, {"action": "retry", "reload": True})
    tool = _gate(gate="error", reloadable=False, notReloadable="a closure", actions=["retry", "abort"])
    assert tool.to_api()["notReloadable"] == "a closure"
    with pytest.raises(EditRefused, match=r"^reload does not apply here: a closure$"):
        edit_fields(tool, {"action": "retry", "reload": True})
    assert _gate(reloadable=True, notReloadable="stale").to_api()["notReloadable"] is None
    loop = _gate(reason="loop", editable=True, actions=["continue", "retry", "inject", "abort"])
    assert edit_fields(loop, {"action": "retry", "input": {"a": 1}}) == {"input": {"a": 1}}
