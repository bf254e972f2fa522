"""Fixtures: an in-process hub (graphmind.testing.FakeHub), a session attached to it, the real hub
for the kit, and the loopback fake Gemini API (graphmind_google_genai.testing.FakeGemini)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphmind_google_genai.testing import FakeGemini
from graphmind_server.testing import pytest_plugin as shared
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)

fakehub = shared.fakehub  # an in-process FakeHub
gm = shared.gm  # a session attached to it


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(chunks=4) as provider:
        yield provider
