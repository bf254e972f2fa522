"""Fixtures: an in-process hub (graphmind.testing.FakeHub), a session attached to it, and the
loopback fake provider (graphmind_anthropic.testing.FakeAnthropic)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphmind_anthropic.testing import FakeAnthropic
from graphmind_server.testing import pytest_plugin as shared
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)

fakehub = shared.fakehub  # an in-process FakeHub
gm = shared.gm  # a session attached to it


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(chunks=6) as provider:
        yield provider


# The shared call-shape table (anthropic_shapes.py) sits next to the tests; importlib mode does not
# put this folder on sys.path by itself.
import os as _os  # noqa: E402
import sys as _sys  # noqa: E402

_sys.path.insert(0, _os.path.dirname(__file__))
