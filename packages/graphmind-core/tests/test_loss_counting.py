"""Every event the hub will never have is counted in stats()["dropped"], and said (issue 29)."""

from __future__ import annotations

import logging
import socket

import pytest

import graphmind
from graphmind import protocol
from graphmind.testing import FakeHub


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_hub_that_cannot_store_is_said_once_and_its_recovery_is_noted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url)
        try:
            assert client.ready(5)
            caplog.set_level(logging.WARNING, logger="graphmind")
            for _ in range(3):
                hub._broadcast({"type": protocol.HUB_STORING, "storing": False, "reason": "disk full (x)"})
            hub.set_debug(mode="run")  # acked once the frames before it were handled
            assert client._hub.hub_storing is False
            hub._broadcast({"type": protocol.HUB_STORING, "storing": True, "reason": None})
            hub.wait_for(lambda: client._hub.hub_storing, what="storing again")
            said = [r.getMessage() for r in caplog.records if "not storing" in r.getMessage()]
            assert len(said) == 1 and "disk full (x)" in said[0] and "stats()['dropped']" in said[0]
        finally:
            client.dispose()


@pytest.mark.parametrize("hide", [False, True], ids=["no-switch", "hide-tool-results"])
def test_an_int_too_long_to_spell_is_sent_as_its_size_and_nothing_is_lost(hide: bool) -> None:
    # json refuses ints of more than 4,300 digits (sys.get_int_max_str_digits). Before: the event
    # was dropped and counted; under a hide switch that let the value through, the seed asks for it
    # to be sent, not lost (issue 29 audit).
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url, hide_tool_results=hide)
        try:
            assert client.ready(5)
            tool = client.wrap(lambda n: n, name="big")
            with client.run("r"):
                tool(1)
                tool(10**5000)
                tool(2)
            client.dispose()
            stats = client.stats()
            assert stats["dropped"] == 0, stats
            hub.wait_for(
                lambda: (
                    len([e for e in hub.events if e.get("type") in protocol.EVENT_TYPES]) >= stats["events"]
                ),
                what="every event sent",
            )
            stored = [e for e in hub.events if e.get("type") in protocol.EVENT_TYPES]
            assert len(stored) == stats["events"]
            started = [e for e in stored if e["type"] == "node.started"]
            assert started[1]["input"] == {"n": "[int of 16610 bits: too many digits to write]"}
            finished = [e for e in stored if e["type"] == "node.finished"]
            assert finished[1]["output"] == ("__REDACTED__" if hide else started[1]["input"]["n"])
        finally:
            client.dispose()


def test_an_event_that_cannot_be_encoded_is_counted_and_the_rest_of_its_batch_arrives(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with FakeHub() as hub:
        client = graphmind.Client(app="t", url=hub.url)
        try:
            assert client.ready(5)
            transport = client._transport
            assert transport is not None
            encode = transport._encode_frame

            def refusing(frame: dict[str, object]) -> str:
                if frame.get("input") == {"n": "refuse me"}:
                    raise TypeError("an encoder bug")
                return encode(frame)

            transport._encode_frame = refusing  # type: ignore[method-assign]
            tool = client.wrap(lambda n: n, name="odd")
            with client.run("r"):
                tool(1)
                tool("refuse me")  # node.started only: the output is not the input dict
                tool(2)
            client.dispose()
            stats = client.stats()
            assert stats["dropped"] == 1, stats
            hub.wait_for(
                lambda: (
                    len([e for e in hub.events if e.get("type") in protocol.EVENT_TYPES])
                    >= stats["events"] - 1
                ),
                what="every event sent",
            )
            stored = [e for e in hub.events if e.get("type") in protocol.EVENT_TYPES]
            assert len(stored) + stats["dropped"] == stats["events"]
            # This client's warning (another test's client closing meanwhile names its own hub).
            said = [
                r.getMessage()
                for r in caplog.records
                if f"never reached the hub at {hub.url}" in r.getMessage()
            ]
            assert len(said) == 1 and said[0].startswith("[graphmind] 1 event(s) never reached"), said
        finally:
            client.dispose()


def test_a_client_with_no_hub_counts_every_event_and_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    client = graphmind.Client(app="t", url=f"ws://127.0.0.1:{free_port()}/ingest", retry_interval=3600)
    tool = client.wrap(lambda i: i, name="t")
    with client.run("r"):
        tool(1)
    client.dispose()
    assert client.stats()["dropped"] == 4 and client.stats()["unsent"] == 0
    assert [r.getMessage() for r in caplog.records if "never reached" in r.getMessage()] == []


def test_a_client_that_reached_a_hub_but_never_attached_counts_every_event_and_says_the_same_number(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A hub that accepts the connection but never sends its welcome (stuck, or overloaded)."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    port = silent.getsockname()[1]
    client = graphmind.Client(
        app="t", url=f"ws://127.0.0.1:{port}/ingest", retry_interval=3600, handshake_timeout=0.2
    )
    assert not client.ready(1)
    silent.close()  # gone before the exit flush: it gives up at once instead of at its cap
    tool = client.wrap(lambda i: i, name="t")
    with client.run("r"):
        for i in range(10):
            tool(i)
    client.dispose()
    stats = client.stats()
    assert stats["events"] == 22 and stats["dropped"] == 22 and stats["unsent"] == 0, stats
    said = [r.getMessage() for r in caplog.records if "never reached" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("[graphmind] 22 event(s) never reached"), said
    assert "never attached" in said[0]
    silent.close()


def test_a_first_handshake_that_fails_against_a_listening_hub_is_retried_soon() -> None:
    """50 clients starting at once in one process: a handshake that timed out under the load used
    to wait retry_interval (10 s) for its next try, and the exit flush did not wait for it."""
    silent = socket.socket()
    silent.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    port = silent.getsockname()[1]
    client = graphmind.Client(
        app="t", url=f"ws://127.0.0.1:{port}/ingest", retry_interval=3600, handshake_timeout=0.2
    )
    try:
        assert not client.ready(0.5)  # reached the port, no welcome
        silent.close()
        with FakeHub().start(port) as hub:
            hub.wait_for(lambda: client.attached, timeout=15, what="attached on a quick retry")
            tool = client.wrap(lambda i: i, name="t")
            with client.run("r"):
                tool(1)
            client.dispose()
            assert client.stats()["dropped"] == 0
            hub.wait_for(
                lambda: len([e for e in hub.events if e.get("type") in protocol.EVENT_TYPES]) >= 4,
                what="every event sent",
            )
            assert len([e for e in hub.events if e.get("type") in protocol.EVENT_TYPES]) == 4
    finally:
        silent.close()
        client.dispose()
