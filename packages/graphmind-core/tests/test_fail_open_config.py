"""Fail-open options (issue 16 item 2): a config typo never crashes the app; disabled means silent."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import graphmind
from graphmind._config.checks import CHECKS
from graphmind._config.options import KNOWN_OPTIONS

DISABLED = {"GRAPHMIND_DISABLED": "1"}

# (options, the warning's text, what is in effect afterwards)
BAD: list[tuple[dict[str, Any], str]] = [
    ({"hide_input": True}, "unknown option 'hide_input' is ignored; did you mean hide_inputs?"),
    ({"bufer_size": 10}, "unknown option 'bufer_size' is ignored; did you mean buffer_size?"),
    ({"zzz": 1}, "unknown option 'zzz' is ignored; valid names: breakpoints, buffer_size,"),
    ({"buffer_size": 0}, "option buffer_size=0 is not a whole number >= 1; using the default (5000)"),
    (
        {"connect_timeout": -1},
        "option connect_timeout=-1 is not a number of seconds >= 0; using the default (0.3)",
    ),
    ({"pause_timeout": "soon"}, "option pause_timeout='soon' is not a number of seconds >= 0"),
    ({"wait_for_attach": "2s"}, "option wait_for_attach='2s'"),
    ({"url": 4747}, "option url=4747 is not a string"),
    ({"meta": ["a"]}, "option meta=['a'] is not a dict; using no meta"),
    ({"logger": "graphmind"}, "option logger='graphmind' is not a logging.Logger"),
    ({"clock": 5}, "option clock=5 is not a callable"),
    ({"hide_inputs": "yes"}, "option hide_inputs='yes' is not understood, so it counts as on"),
    ({"loop_guard": {"threshold": -1}}, "loop_guard threshold=-1 is not a whole number >= 0"),
    (
        {"loop_guard": {"treshold": 5}},
        "loop_guard has no option 'treshold', so it is ignored; did you mean threshold?",
    ),
    ({"loop_guard": {"mode": "hold"}}, "loop_guard mode='hold' is not one of 'pause', 'warn' or 'off'"),
    ({"loop_guard": "yes"}, "option loop_guard='yes' is not False, True or a dict"),
    ({"breakpoints": ["nocolon"]}, "option breakpoints=['nocolon'] has 'nocolon'; each entry is a node id"),
    ({"mask": "("}, "mask: '(' is not a regular expression"),
]


@pytest.mark.parametrize(("options", "warning"), BAD)
def test_enabled_a_bad_option_warns_once_and_falls_back(
    options: dict[str, Any], warning: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    client = graphmind.Client(app="t", environ={}, **options)
    assert client.enabled
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1, messages
    assert warning in messages[0]
    assert "\n" not in messages[0]
    defaults = graphmind.Client(app="t", environ={})
    if "hide_inputs" in options:
        assert client.redaction_switches.hide_inputs  # unreadable means hidden, never quietly recorded
    elif "mask" in options:
        # A mask that cannot be read masks nothing: every value is hidden instead of leaking.
        assert client.redaction_switches.hide_inputs and client.redaction_switches.hide_outputs
    else:
        assert client.redaction_switches == defaults.redaction_switches
        assert client.loop_guard_config == defaults.loop_guard_config
    for name in ("buffer_size", "connect_timeout", "pause_timeout", "wait_for_attach", "url", "meta"):
        assert getattr(client.options, name) == getattr(defaults.options, name)


@pytest.mark.parametrize(("options", "warning"), BAD)
def test_disabled_nothing_is_checked_and_nothing_is_logged(
    options: dict[str, Any], warning: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = graphmind.Client(app="t", environ=DISABLED, **options)
    assert not client.enabled
    assert caplog.records == []

    def tool(x: int) -> int:
        return x

    assert client.tool(tool) is tool  # identity


def test_a_good_loop_guard_field_survives_a_bad_neighbour() -> None:
    client = graphmind.Client(environ={}, loop_guard={"threshold": 5, "mode": "hold"})
    assert client.loop_guard_config.threshold == 5
    assert client.loop_guard_config.mode == "pause"


def test_a_bad_loop_guard_field_falls_back_to_its_environment_value() -> None:
    client = graphmind.Client(environ={"GRAPHMIND_LOOP_THRESHOLD": "7"}, loop_guard={"threshold": -1})
    assert client.loop_guard_config.threshold == 7


def test_every_known_option_has_a_check() -> None:
    assert set(CHECKS) == set(KNOWN_OPTIONS)


def test_a_bad_logger_still_gets_the_warning_to_the_default_logger(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    graphmind.Client(environ={}, logger=object())
    assert "is not a logging.Logger" in caplog.text
