"""Attach by default where it costs nothing, and a malformed URL said once."""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

import pytest

import graphmind
from graphmind._hub.attach_wait import AttachWaitPolicy, is_loopback_url
from graphmind.testing import FakeHub

LOCAL = "ws://127.0.0.1:4747/ingest"


def refused_url() -> str:
    """A loopback port with nothing listening (bound, never listened: connect() is refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"ws://127.0.0.1:{port}/ingest"


def test_a_breakpoint_set_before_the_script_starts_holds_its_first_call_with_no_option() -> None:
    with FakeHub() as hub:
        hub.set_debug(breakpoints=[("tool:search", "before")])  # before any app connects
        client = graphmind.Client(app="script", url=hub.url)
        try:
            search = client.wrap(lambda q: f"found {q}", name="search")
            result: list[Any] = []
            worker = threading.Thread(target=lambda: result.append(search("x")))
            worker.start()
            paused = hub.next_paused()
            assert paused["nodeId"] == "tool:search" and paused["reason"] == "breakpoint"
            assert result == [] and worker.is_alive()
            hub.resolve(paused["gateId"], "continue")
            worker.join(5)
            assert result == ["found x"]
        finally:
            client.dispose()


def test_the_first_run_waits_for_the_hub_too() -> None:
    with FakeHub() as hub:
        hub.set_debug(breakpoints=[("tool:search", "before")])
        hub.auto_answer("inject", "from the debugger")
        client = graphmind.Client(app="script", url=hub.url)
        try:
            with client.run("ticket"):
                assert client.attached  # the run's start waited for the handshake
                assert client.wrap(lambda q: q, name="search")("x") == "from the debugger"
        finally:
            client.dispose()


def test_with_nothing_listening_the_first_call_carries_on_detached_at_once() -> None:
    client = graphmind.Client(app="script", url=refused_url())
    try:
        search = client.wrap(lambda q: q, name="search")
        started = time.monotonic()
        assert search("x") == "x"
        # The bound is 2 s; a refused port is known after one connect(). (The < 1 ms figure is
        # measured in bench/attach.py, not here.)
        assert time.monotonic() - started < 1.0
        assert not client.attached
    finally:
        client.dispose()


@pytest.mark.parametrize(
    ("option", "env", "url", "expected"),
    [
        (None, {}, LOCAL, AttachWaitPolicy(2.0, True)),
        (None, {}, "ws://localhost:4747/ingest", AttachWaitPolicy(2.0, True)),
        (None, {}, "ws://[::1]:4747/ingest", AttachWaitPolicy(2.0, True)),
        (None, {}, "ws://hub.example:4747/ingest", AttachWaitPolicy(None, False)),
        (False, {}, LOCAL, AttachWaitPolicy(None, False)),
        (None, {"GRAPHMIND_WAIT_FOR_ATTACH": "0"}, LOCAL, AttachWaitPolicy(None, False)),
        (None, {"GRAPHMIND_WAIT_FOR_ATTACH": " OFF "}, LOCAL, AttachWaitPolicy(None, False)),
        (None, {"GRAPHMIND_WAIT_FOR_ATTACH": "1"}, "ws://hub.example/ingest", AttachWaitPolicy(2.0, False)),
        (None, {"GRAPHMIND_WAIT_FOR_ATTACH": "0.5"}, LOCAL, AttachWaitPolicy(0.5, False)),
        (None, {"GRAPHMIND_WAIT_FOR_ATTACH": "soon"}, LOCAL, AttachWaitPolicy(2.0, True)),
        (True, {"GRAPHMIND_WAIT_FOR_ATTACH": "0"}, LOCAL, AttachWaitPolicy(2.0, False)),
        (3, {}, "ws://hub.example/ingest", AttachWaitPolicy(3.0, False)),
        (0, {}, LOCAL, AttachWaitPolicy(None, False)),
    ],
)
def test_the_option_beats_the_variable_which_beats_the_loopback_default(
    option: Any, env: dict[str, str], url: str, expected: AttachWaitPolicy
) -> None:
    assert AttachWaitPolicy.resolve(option, env, url) == expected


def test_is_loopback_url() -> None:
    assert is_loopback_url("ws://127.0.0.2:1/x") and not is_loopback_url("ws://10.0.0.1:1/x")
    assert not is_loopback_url("not a url")


@pytest.mark.usefixtures("bounded_dispose")
@pytest.mark.parametrize("env", [{"GRAPHMIND_WAIT_FOR_ATTACH": "0"}, {}])
def test_turned_off_the_first_call_does_not_wait(env: dict[str, str]) -> None:
    """A port that accepts and never answers the handshake: the default waits (bounded), off does not."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"ws://127.0.0.1:{silent.getsockname()[1]}/ingest"
        options: dict[str, Any] = {} if env else {"wait_for_attach": False}
        client = graphmind.Client(app="script", url=url, environ=env, **options)
        try:
            started = time.monotonic()
            client.wrap(lambda: 1, name="t")()
            assert time.monotonic() - started < 1.0
            # The default, for contrast: it waits up to its bound for a handshake that never comes.
            waiting = graphmind.Client(app="script", url=url, environ={}, wait_for_attach=0.3)
            started = time.monotonic()
            waiting.wrap(lambda: 1, name="t")()
            assert time.monotonic() - started >= 0.3
            waiting.dispose()
        finally:
            client.dispose()


@pytest.mark.parametrize(
    ("options", "env", "named"),
    [
        ({"url": "not a url"}, {}, "url='not a url'"),
        ({}, {"GRAPHMIND_URL": "not a url"}, "GRAPHMIND_URL='not a url'"),
        (
            {},
            {"GRAPHMIND_URL": "http://127.0.0.1:4747/ingest"},
            "GRAPHMIND_URL='http://127.0.0.1:4747/ingest'",
        ),
        ({}, {"GRAPHMIND_URL": "ws://127.0.0.1:99999/ingest"}, "GRAPHMIND_URL='ws://127.0.0.1:99999/ingest'"),
        ({"url": "ws:///ingest"}, {}, "url='ws:///ingest'"),
    ],
)
def test_a_malformed_url_warns_once_naming_it_and_the_form_and_runs_detached(
    options: dict[str, Any], env: dict[str, str], named: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="graphmind"):
        client = graphmind.Client(app="script", environ=env, **options)
        try:
            search = client.wrap(lambda q: f"found {q}", name="search")
            with client.run("r"):
                assert [search("x"), search("y")] == ["found x", "found y"]
            assert not client.attached and not client.ready(0.2)
        finally:
            client.dispose()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert named in lines[0]
    assert "expected ws://HOST:PORT/ingest, for example ws://127.0.0.1:4747/ingest" in lines[0]
    assert "detached" in lines[0]


def test_a_valid_url_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="graphmind"):
        client = graphmind.Client(app="script", url=refused_url())
        client.wrap(lambda: 1, name="t")()
        client.dispose()
    assert [r.getMessage() for r in caplog.records] == []


def test_an_unreadable_wait_variable_warns_once_and_keeps_the_default(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="graphmind"):
        client = graphmind.Client(
            app="script", url=refused_url(), environ={"GRAPHMIND_WAIT_FOR_ATTACH": "soon"}
        )
        client.dispose()
    assert [r.getMessage() for r in caplog.records] == [
        "[graphmind] GRAPHMIND_WAIT_FOR_ATTACH='soon' is not 0/off, 1/on or a number of seconds; using the "
        "default (wait for the hub only when it is on this machine and listening)"
    ]
