"""Shared fixtures: an in-process protocol-v1 hub, and a client attached to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import graphmind
from graphmind.testing import FakeHub


@pytest.fixture(autouse=True)
def _own_graphmind_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # An app takes the token a hub wrote for its port from $GRAPHMIND_HOME/token-<port> and then
    # refuses a listener that cannot prove it (docs/security.md). A file a killed hub left in the
    # shared ~/.graphmind for the port a FakeHub happens to get would detach these tests' clients.
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path_factory.getbasetemp() / "graphmind-home"))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    monkeypatch.delenv("GRAPHMIND_TOKEN_FILE", raising=False)


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as h:
        yield h


@pytest.fixture
def client(hub: FakeHub) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="core-tests", url=hub.url, retry_interval=0.2)
    assert c.ready(5)
    yield c
    c.dispose()
