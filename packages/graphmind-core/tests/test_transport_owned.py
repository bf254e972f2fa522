"""The transport owns what it uses (issue 18, item 2): an app that patches websockets later never
receives GraphMind's connections, and nothing a connect attempt raises ends the transport."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import websockets.sync.client

import graphmind
from graphmind.testing import FakeHub


def test_patching_websockets_connect_after_instrumenting_sees_no_call_from_graphmind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="owned", url=hub.url, retry_interval=0.1)
        calls: list[Any] = []

        def fake_connect(*args: Any, **kwargs: Any) -> Any:  # what a test of the app's own realtime code does
            calls.append((args, kwargs))
            raise RuntimeError("the app's mock")

        monkeypatch.setattr(websockets.sync.client, "connect", fake_connect)
        try:
            assert client.ready(5)
            client.wrap(lambda: 1, name="t")()
            hub.wait_for(lambda: len(hub.of_type("node.finished")) == 1, what="the first send")
            hub.drop_connections()  # reconnects go through the connect bound when the transport was built
            hub.wait_for(lambda: len(hub.of_type("node.finished")) >= 2, what="the replay after a reconnect")
        finally:
            client.dispose()
    assert calls == []


def test_a_keyboard_interrupt_from_a_patched_connect_does_not_stop_the_transport(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = websockets.sync.client.connect
    raised = threading.Event()

    def interrupting(*args: Any, **kwargs: Any) -> Any:
        if not raised.is_set():
            raised.set()
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(
        websockets.sync.client, "connect", interrupting
    )  # before: the transport binds this one
    with FakeHub() as hub:
        client = graphmind.Client(app="survives", url=hub.url, retry_interval=0.1)
        try:
            assert not client.ready(1) or raised.is_set()
            assert raised.wait(5)
            assert client.ready(5), "the transport thread died with the KeyboardInterrupt"
            client.wrap(lambda: 2, name="after")()
            hub.wait_for(lambda: hub.of_type("node.finished"), what="an event after the interrupt")
        finally:
            client.dispose()
    messages = [r.getMessage() for r in caplog.records if "KeyboardInterrupt" in r.getMessage()]
    assert len(messages) == 1, messages  # logged once, then retried
