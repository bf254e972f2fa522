"""Shared fixtures: an in-process protocol-v1 hub, and a client attached to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import graphmind
from graphmind._wire.transport import Transport
from graphmind._wire.write_loop import FLUSH_CAP_S, FLUSH_IDLE_S
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


@pytest.fixture
def bounded_dispose(monkeypatch: pytest.MonkeyPatch) -> None:
    """For a test about connecting, not about dispose(): with a hub that accepts and never answers,
    dispose() waits up to FLUSH_CAP_S (10 s, on purpose: 1 s without a batch is no dead hub among
    200 threads at the GIL, issue 29), which such a test need not pay at its end. Here that bound
    is 1 s; the product's stays as it is."""
    close = Transport.close

    def bounded(self: Transport, idle: float = FLUSH_IDLE_S, cap: float = FLUSH_CAP_S) -> int:
        return close(self, idle, min(cap, 1.0))

    monkeypatch.setattr(Transport, "close", bounded)
