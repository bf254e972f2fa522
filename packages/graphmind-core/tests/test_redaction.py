from __future__ import annotations

import pytest

from graphmind._events.redaction import RedactionSwitches, resolve_redaction_switches

ALL_OFF = RedactionSwitches()


@pytest.mark.parametrize("raw", ["1", "true", "TRUE", " True ", "\t1\n"])
def test_env_values_that_turn_a_switch_on(raw: str) -> None:
    switches = resolve_redaction_switches({}, {"GRAPHMIND_HIDE_INPUTS": raw})
    assert switches == RedactionSwitches(hide_inputs=True)


@pytest.mark.parametrize("raw", ["", "0", "false", "yes", "on", "2", "tru"])
def test_anything_else_in_the_env_is_off(raw: str) -> None:
    assert resolve_redaction_switches({}, {"GRAPHMIND_HIDE_OUTPUTS": raw}) == ALL_OFF


def test_each_variable_maps_to_its_switch() -> None:
    env = {
        "GRAPHMIND_HIDE_INPUTS": "1",
        "GRAPHMIND_HIDE_OUTPUTS": "1",
        "GRAPHMIND_HIDE_TOOL_ARGS": "1",
        "GRAPHMIND_HIDE_TOOL_RESULTS": "1",
    }
    for var, name in zip(
        env, ["hide_inputs", "hide_outputs", "hide_tool_args", "hide_tool_results"], strict=True
    ):
        switches = resolve_redaction_switches({}, {var: "true"})
        assert switches.as_dict() == {**ALL_OFF.as_dict(), name: True}
        assert switches.any
    assert all(resolve_redaction_switches({}, env).as_dict().values())
    assert not ALL_OFF.any


@pytest.mark.parametrize("value", [True, 1, "1", "true", "TRUE"])
def test_options_that_turn_a_switch_on(value: object) -> None:
    assert resolve_redaction_switches({"hide_tool_args": value}, {}) == RedactionSwitches(hide_tool_args=True)


@pytest.mark.parametrize("value", [False, 0, None, "0", "false", ""])
def test_options_that_leave_it_off(value: object) -> None:
    assert resolve_redaction_switches({"hide_tool_results": value}, {}) == ALL_OFF


def test_an_option_cannot_undo_the_environment() -> None:
    switches = resolve_redaction_switches({"hide_inputs": False}, {"GRAPHMIND_HIDE_INPUTS": "1"})
    assert switches.hide_inputs


def test_either_source_turns_a_switch_on() -> None:
    switches = resolve_redaction_switches({"hide_outputs": True}, {"GRAPHMIND_HIDE_TOOL_ARGS": "true"})
    assert switches == RedactionSwitches(hide_outputs=True, hide_tool_args=True)


@pytest.mark.parametrize("value", ["yes", "on", 2, 1.0, [True]])
def test_an_option_spelled_oddly_is_refused_not_read_as_off(value: object) -> None:
    with pytest.raises(ValueError, match="hide_inputs="):
        resolve_redaction_switches({"hide_inputs": value}, {})


def test_as_dict_uses_the_python_names() -> None:
    assert RedactionSwitches(hide_outputs=True).as_dict() == {
        "hide_inputs": False,
        "hide_outputs": True,
        "hide_tool_args": False,
        "hide_tool_results": False,
    }
    assert RedactionSwitches.from_wire({"hideToolResults": True}) == RedactionSwitches(hide_tool_results=True)
