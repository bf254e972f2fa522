"""FakeHub fixtures and LlamaIndex fakes for the adapter's unit tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import graphmind
from graphmind.testing import FakeHub
from graphmind_llamaindex import uninstrument_llamaindex
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub(pause_on_error="off") as h:
        yield h


@pytest.fixture
def client(hub: FakeHub) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="li", url=hub.url, retry_interval=0.2)
    assert c.ready(5)
    yield c
    uninstrument_llamaindex()
    c.dispose()


# li_fixtures.py sits next to the tests; importlib mode does not put this folder on sys.path by itself.
import os as _os  # noqa: E402
import sys as _sys  # noqa: E402

_sys.path.insert(0, _os.path.dirname(__file__))
