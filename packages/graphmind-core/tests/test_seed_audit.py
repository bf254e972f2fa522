"""The seed audits (docs/conformance.md): each behaviour the environment seed asks for, where the
code did otherwise. Each test failed before its fix."""

from __future__ import annotations

import logging
import socket
import threading

import pytest

import graphmind
from graphmind._config.options import Options
from graphmind.testing import FakeHub


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("timeout", [float("nan"), -1.0, "2"])
def test_ready_with_an_unusable_timeout_returns_at_once(timeout: object) -> None:
    client = graphmind.Client(app="t", url=f"ws://127.0.0.1:{free_port()}/ingest", retry_interval=3600)
    try:
        done: list[bool] = []
        thread = threading.Thread(target=lambda: done.append(client.ready(timeout)), daemon=True)  # type: ignore[arg-type]
        thread.start()
        thread.join(3)
        assert done == [False]  # NaN never compared past the deadline: it spun a core forever
    finally:
        client.dispose()


@pytest.mark.parametrize(("value", "on"), [("false", False), ("0", False), ("off", False), ("true", True)])
def test_enabled_as_a_string_means_what_it_says(value: str, on: bool) -> None:
    assert Options.resolve("t", {"enabled": value}, {}).enabled is on


@pytest.mark.parametrize(("value", "on"), [(0, False), (1, True), (0.0, False), (1.0, True)])
@pytest.mark.parametrize("environ", [{}, {"ENV": "production"}, {"ENV": "production", "GRAPHMIND": "1"}])
def test_enabled_as_the_number_0_or_1_is_taken_as_given_whatever_the_environment(
    value: float, on: bool, environ: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    # The kill-switch table: "enabled option passed: as given", above the production rule. 0 once
    # counted as not given (GraphMind on, with a warning) and 1 under production turned it off.
    caplog.set_level(logging.WARNING, logger="graphmind")
    assert Options.resolve("t", {"enabled": value}, environ).enabled is on
    assert [r.getMessage() for r in caplog.records] == []


def test_enabled_as_another_number_falls_back_to_the_environment_rule_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    assert Options.resolve("t", {"enabled": 2}, {"ENV": "production"}).enabled is False
    assert Options.resolve("t", {"enabled": 2}, {}).enabled is True  # enabled: the warning is logged
    assert any("enabled=2" in r.getMessage() for r in caplog.records)


def test_an_unreadable_enabled_falls_back_to_the_environment_rule_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    assert Options.resolve("t", {"enabled": "maybe"}, {"ENV": "production"}).enabled is False
    assert Options.resolve("t", {"enabled": "maybe"}, {}).enabled is True
    assert any("enabled='maybe'" in r.getMessage() for r in caplog.records)


def test_a_graphmind_url_with_surrounding_spaces_attaches() -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", environ={"GRAPHMIND_URL": f"  {hub.url}\n"})
        try:
            assert client.options.url == hub.url
            assert client.ready(5)
        finally:
            client.dispose()


def test_a_disabled_session_takes_any_breakpoint_or_hold_if_without_raising() -> None:
    client = graphmind.Client(app="t", environ={"GRAPHMIND_DISABLED": "1"})

    def fn() -> int:
        return 1

    assert client.wrap(fn, "t", breakpoint="befor") is fn  # type: ignore[arg-type]
    assert client.wrap(fn, "t", hold_if=3) is fn  # type: ignore[arg-type]
    assert client.tool(breakpoint="befor")(fn) is fn  # type: ignore[arg-type]
    assert client.wrap_tools([fn], hold_if=3) == [fn]  # type: ignore[arg-type]


def test_an_enabled_session_still_says_a_bad_breakpoint_at_once() -> None:
    client = graphmind.Client(app="t", url=f"ws://127.0.0.1:{free_port()}/ingest")
    try:
        with pytest.raises(ValueError, match="befor"):
            client.wrap(lambda: 1, "t", breakpoint="befor")  # type: ignore[arg-type]
    finally:
        client.dispose()
