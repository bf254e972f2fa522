"""The SDK never sends a frame over the hub's limit (protocol.INGEST_MAX_FRAME, issue 28): the hub
would close the connection (1009) and every attach would stop at the same event. Such an event
(only an unbounded field can make one: an error message, a name) is dropped, counted, warned
about once, and the events after it flow."""

from __future__ import annotations

import logging

import pytest

import graphmind
from graphmind import protocol
from graphmind.testing import FakeHub


def test_an_event_over_the_hubs_frame_limit_is_dropped_counted_and_the_rest_flows(
    hub: FakeHub, caplog: pytest.LogCaptureFixture
) -> None:
    client = graphmind.Client(app="big-error", url=hub.url, max_buffer_bytes=64 * 1024 * 1024)
    try:
        assert client.ready(5)
        huge = "e" * (protocol.INGEST_MAX_FRAME + 1)

        def fails() -> None:
            raise ValueError(huge)

        with caplog.at_level(logging.WARNING, logger="graphmind"), client.run("r"):
            with pytest.raises(ValueError):
                client.wrap(fails, name="fails")()
            client.wrap(lambda: "after", name="ok")()
        hub.wait_for(lambda: any(e["type"] == "run.finished" for e in hub.events))
        assert client.stats()["dropped"] == 1
        types = [e["type"] for e in hub.events]
        assert "node.error" not in types and types.count("node.finished") == 1 and "run.finished" in types
        assert [r.getMessage() for r in caplog.records if "frame limit" in r.getMessage()] != []
    finally:
        client.dispose()
