"""Shared fixtures: an in-process protocol-v1 hub, and a client attached to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import graphmind
from graphmind.testing import FakeHub


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
