"""Fixtures: an in-process hub (graphmind.testing.FakeHub), a session attached to it, and the
loopback fake provider (graphmind_openai.testing.FakeOpenAI)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphmind.testing import FakeHub
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import pytest_plugin as shared
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)

fakehub = shared.fakehub  # an in-process FakeHub
gm = shared.gm  # a session attached to it


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(chunks=6) as provider:
        yield provider


def finished(hub: FakeHub, count: int = 1) -> list[dict]:
    """The first `count` llm:step endings (node.finished or node.error), waiting for them."""
    ends = ("node.finished", "node.error")
    hub.wait_for(
        lambda: sum(1 for e in hub.events if e["type"] in ends and e["nodeId"] == "llm:step") >= count,
        what="llm:step endings",
    )
    return [e for e in hub.events if e["type"] in ends and e["nodeId"] == "llm:step"]


# The shared call-shape table (openai_shapes.py) sits next to the tests; importlib mode does not
# put this folder on sys.path by itself.
import os as _os  # noqa: E402
import sys as _sys  # noqa: E402

_sys.path.insert(0, _os.path.dirname(__file__))
