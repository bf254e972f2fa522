"""Fail-open: disabled clients are identity, detached clients run everything as if we were not there."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time

import pytest

import graphmind


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PRODUCTION = [
    {"GRAPHMIND_DISABLED": "1"},
    {"GRAPHMIND_DISABLED": "1", "GRAPHMIND": "1"},
    {"NODE_ENV": "production"},
    {"GRAPHMIND_ENV": "prod"},
    {"ENVIRONMENT": "Production"},
    {"APP_ENV": "PROD"},
    {"PYTHON_ENV": "production"},
    {"ENV": "production"},
    {"DJANGO_ENV": "production"},
    {"FLASK_ENV": " production "},
]


@pytest.mark.parametrize("environ", PRODUCTION)
def test_disabled_by_each_kill_switch_rule(environ: dict[str, str]) -> None:
    before = {t.name for t in threading.enumerate()}
    client = graphmind.Client(app="off", environ=environ)

    def f(x: int) -> int:
        return x

    assert not client.enabled
    assert client.wrap(f) is f
    assert client.tool(f) is f
    tools = {"f": f}
    assert client.wrap_tools(tools) is tools
    obj = type("O", (), {"m": lambda self: 1})()
    assert client.wrap_method(obj, "m") is obj and "m" not in vars(obj)
    with client.run("r") as run:
        assert run.run_id and not run.aborted
        assert f(3) == 3
    assert client.ready(0.05) is False
    assert client._transport is None
    assert {t.name for t in threading.enumerate()} - before == set()


def test_disabled_beats_an_explicit_enabled_true() -> None:
    assert not graphmind.Client(enabled=True, environ={"GRAPHMIND_DISABLED": "1"}).enabled


def test_enabled_option_beats_production() -> None:
    assert graphmind.Client(enabled=True, environ={"NODE_ENV": "production"}).enabled
    assert not graphmind.Client(enabled=False, environ={}).enabled


def test_graphmind_1_re_enables_production() -> None:
    assert graphmind.Client(environ={"NODE_ENV": "production", "GRAPHMIND": "1"}).enabled


def test_only_the_first_set_variable_counts() -> None:
    assert graphmind.Client(environ={"GRAPHMIND_ENV": "development", "NODE_ENV": "production"}).enabled
    assert not graphmind.Client(environ={"GRAPHMIND_ENV": "prod", "NODE_ENV": "development"}).enabled


def test_graphmind_url_moves_the_endpoint() -> None:
    assert (
        graphmind.Client(environ={"GRAPHMIND_URL": "ws://127.0.0.1:4848/ingest"}).options.url
        == "ws://127.0.0.1:4848/ingest"
    )
    assert (
        graphmind.Client(url="ws://x/ingest", environ={"GRAPHMIND_URL": "ws://y/ingest"}).options.url
        == "ws://x/ingest"
    )


def test_unknown_option_is_a_clear_warning_not_a_crash(caplog: pytest.LogCaptureFixture) -> None:
    # Fail open (issue 16 item 2; more in test_fail_open_config.py): a typo must not crash a start.
    caplog.set_level(logging.WARNING, logger="graphmind")
    assert graphmind.Client(pause_timeout_ms=5).options.pause_timeout is None
    assert graphmind.Client(pause_timeout="soon").options.pause_timeout is None
    assert "unknown option 'pause_timeout_ms' is ignored; did you mean pause_timeout?" in caplog.text
    assert "option pause_timeout='soon' is not a number of seconds" in caplog.text


def test_ten_thousand_calls_with_no_hub_return_real_results(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    client = graphmind.Client(app="nohub", url=f"ws://127.0.0.1:{_free_port()}/ingest")

    @client.tool
    def add(a: int, b: int) -> int:
        return a + b

    @client.tool
    async def aadd(a: int, b: int) -> int:
        return a + b

    assert [add(i, i) for i in range(10_000)] == [2 * i for i in range(10_000)]

    async def many() -> list[int]:
        return [await aadd(i, 1) for i in range(10_000)]

    assert asyncio.run(many()) == [i + 1 for i in range(10_000)]
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) <= 1
    stats = client.stats()
    assert stats["attached"] is False and stats["dropped"] > 0  # the ring kept the newest 5000
    client.dispose()


def test_ready_returns_false_within_its_timeout_with_no_hub() -> None:
    client = graphmind.Client(url=f"ws://127.0.0.1:{_free_port()}/ingest")
    started = time.monotonic()
    assert client.ready(0.5) is False
    assert time.monotonic() - started < 1.0
    client.dispose()


@pytest.mark.parametrize("timeout", [0.3, 0.8])
def test_ready_against_a_hub_that_never_answers_returns_at_its_timeout(timeout: float) -> None:
    # The seed audit saw a first ready() take about twice its timeout. Bounded here for the worst
    # case: a port that accepts the connection and then says nothing (first and second call).
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    try:
        client = graphmind.Client(app="t", url=f"ws://127.0.0.1:{silent.getsockname()[1]}/ingest")
        try:
            for _ in range(2):
                started = time.monotonic()
                assert client.ready(timeout) is False
                assert time.monotonic() - started < timeout + 0.25
        finally:
            client.dispose()
    finally:
        silent.close()


def test_ready_returns_true_with_a_hub() -> None:
    from graphmind.testing import FakeHub

    with FakeHub() as hub:
        client = graphmind.Client(url=hub.url)
        assert client.ready(5) is True
        assert client.ready(0) is True
        client.dispose()


def test_concurrent_ready_calls_share_one_connection_attempt() -> None:
    # Environment page: ready() force-starts; callers waiting at once share the attempt under way.
    from graphmind.testing import FakeHub

    with FakeHub() as hub:
        client = graphmind.Client(url=hub.url, retry_interval=3600)
        barrier = threading.Barrier(8)
        results: list[bool] = []

        def wait() -> None:
            barrier.wait()
            results.append(client.ready(5))

        threads = [threading.Thread(target=wait) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [True] * 8
        assert len(hub.hellos) == 1, f"{len(hub.hellos)} connections for 8 concurrent ready() calls"
        client.dispose()


def test_ready_kicks_a_new_attempt_at_once_when_the_hub_appears() -> None:
    # A hub that was never there is retried every retry_interval (an hour here) or at once when
    # ready() asks: a hub started after the first failed attempt is attached within ready's wait.
    from graphmind.testing import FakeHub

    port = _free_port()
    client = graphmind.Client(url=f"ws://127.0.0.1:{port}/ingest", retry_interval=3600)
    try:
        assert client.ready(0.3) is False
        hub = FakeHub().start(port=port)
        try:
            started = time.monotonic()
            assert client.ready(5) is True
            assert time.monotonic() - started < 3.0
            assert len(hub.hellos) == 1
        finally:
            hub.stop()
    finally:
        client.dispose()


async def test_aready_and_wait_for_attach() -> None:
    from graphmind.testing import FakeHub

    with FakeHub() as hub:
        client = graphmind.Client(url=hub.url, wait_for_attach=True)

        async def first() -> int:
            return 1

        gated = client.wrap(first, name="first")
        assert await gated() == 1
        assert client.attached  # the first gated call waited for the handshake (in a worker thread)
        assert await client.aready(1) is True
        await client.adispose()


async def test_a_sync_gated_call_on_a_running_loop_starts_the_connect_and_never_waits() -> None:
    """Issue 39: a sync call inside async code runs on the loop's thread; waiting there for the
    handshake would stall every task of the loop. It starts the connect and carries on."""
    from graphmind.testing import FakeHub

    with FakeHub() as hub:
        client = graphmind.Client(url=hub.url, wait_for_attach=5)
        gated = client.wrap(lambda: 1, name="first")
        started = time.monotonic()
        assert gated() == 1
        assert time.monotonic() - started < 1.0
        assert await client.aready(5) is True  # the connect it started attaches
        await client.adispose()


def test_values_that_are_not_json_never_make_a_call_fail() -> None:
    from graphmind.testing import FakeHub

    class Weird:
        @property
        def boom(self) -> int:
            raise RuntimeError("getter")

        def __repr__(self) -> str:
            raise RuntimeError("repr")

    cyclic: dict[str, object] = {}
    cyclic["self"] = cyclic
    with FakeHub() as hub:
        client = graphmind.Client(url=hub.url)
        assert client.ready(5)
        echo = client.wrap(lambda *values: values, name="echo")
        values = (Weird(), cyclic, b"\x00\xff", {1: "int key"}, float("nan"), object())
        assert echo(*values) == values
        finished = hub.wait_event(lambda e: e["type"] == "node.finished")
        assert finished["nodeId"] == "tool:echo"
        client.dispose()


def test_span_and_run_decorators() -> None:
    from graphmind.testing import FakeHub

    with FakeHub() as hub:
        client = graphmind.Client(app="spans", url=hub.url)
        assert client.ready(5)

        @client.run("decorated")
        def agent() -> str:
            with client.span("retrieve", kind="retriever", input={"q": "x"}) as span:
                span.output = {"count": 2}
            return "done"

        assert agent() == "done"
        finished = hub.wait_event(
            lambda e: e["type"] == "node.finished" and e["nodeId"] == "retriever:retrieve"
        )
        assert finished["output"] == {"count": 2}
        started = hub.wait_event(lambda e: e["type"] == "node.started")
        run_started = hub.wait_event(lambda e: e["type"] == "run.started")
        assert started["parentInstanceId"] == run_started["runId"]
        assert hub.wait_event(lambda e: e["type"] == "run.finished")["status"] == "finished"
        client.dispose()
