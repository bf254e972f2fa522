"""A run's thread (docs/protocol.md, `run.started`): named per run, per client, or by the environment."""

from __future__ import annotations

import uuid

import pytest

import graphmind
from graphmind.adapter import thread_id
from graphmind.testing import FakeHub


def _client(hub: FakeHub, **options: object) -> graphmind.Client:
    c = graphmind.Client(app="thread-tests", url=hub.url, retry_interval=0.2, **options)  # type: ignore[arg-type]
    assert c.ready(5)
    return c


def test_a_run_names_its_thread_and_the_client_default_fills_the_rest(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHMIND_THREAD", "from-env")
    client = _client(hub, thread="chat-7")
    with client.run("turn", thread="chat-9"):
        pass
    with client.run("turn"):
        pass
    client.wrap(lambda: 1, name="outside")()  # the implicit run takes the client's thread too
    hub.wait_for(lambda: len(hub.of_type("run.started")) == 3)
    assert [e.get("thread") for e in hub.of_type("run.started")] == ["chat-9", "chat-7", "chat-7"]
    client.dispose()


def test_graphmind_thread_is_the_default_and_no_thread_sends_no_field(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHMIND_THREAD", " session-1 ")
    client = _client(hub)
    with client.run("with-env"):
        pass
    monkeypatch.delenv("GRAPHMIND_THREAD")
    other = _client(hub)
    with other.run("without"):
        pass
    hub.wait_for(lambda: len(hub.of_type("run.started")) == 2)
    # Two clients, two connections: their frames may reach the hub in either order.
    started = {e["name"]: e for e in hub.of_type("run.started")}
    assert started["with-env"]["thread"] == "session-1" and "thread" not in started["without"]
    client.dispose()
    other.dispose()


def test_thread_id_carries_a_short_string_or_nothing() -> None:
    u = uuid.UUID(int=5)
    assert thread_id(u) == str(u)
    assert thread_id(42) == "42"
    assert thread_id("  ") is None and thread_id(None) is None and thread_id(True) is None
    assert thread_id({"a": 1}) is None
    assert thread_id("x" * 500) == "x" * 200
