"""A replay divergence's diff shows the inputs as events do (docs/replay.md): under `mask=` the
masked part reads as masked, under a hide switch the input as "__REDACTED__"; the value itself is
in neither the exception nor the node's error event."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphmind
from graphmind import protocol as proto
from graphmind._events.mask import MASKED
from graphmind._replay.errors import ReplayDivergence
from graphmind.testing import FakeHub, write_cassette


def _cassette(tmp_path: Path) -> Path:
    with FakeHub() as hub:
        client = graphmind.Client(app="pins", url=hub.url, retry_interval=0.2)
        assert client.ready(5)
        check = client.wrap(lambda pin, user: True, name="check")
        with client.run("unlock"):
            check(pin="PIN-0000", user="ana")
        sent = client.stats()["events"]
        hub.wait_for(lambda: len(hub.events) >= sent, what="the events")
        client.dispose()
        path = tmp_path / "unlock.jsonl"
        write_cassette(path, client.client_id, list(hub.events))
    return path


@pytest.mark.parametrize(
    ("options", "shown"),
    [({"mask": r"PIN-\d{4}"}, MASKED), ({"hide_inputs": True}, "no diff shown")],
)
def test_the_divergence_diff_never_shows_a_hidden_value(
    tmp_path: Path, options: dict[str, object], shown: str
) -> None:
    cassette = _cassette(tmp_path)
    with FakeHub() as hub:
        client = graphmind.Client(
            app="pins", url=hub.url, replay={"source": str(cassette), "on_divergence": "fail"}, **options
        )
        try:
            assert client.ready(5)
            check = client.wrap(lambda pin, user: True, name="check")
            with pytest.raises(ReplayDivergence) as diverged, client.run("unlock"):
                check(pin="PIN-9137", user="bob")
            error = hub.wait_event(lambda e: e["type"] == proto.NODE_ERROR)
        finally:
            client.dispose()
    text = str(diverged.value) + str(error)
    assert "PIN-9137" not in text and shown in diverged.value.diff
    if "mask" in options:
        assert '"bob"' in diverged.value.diff  # what is not hidden still shows where they differ
