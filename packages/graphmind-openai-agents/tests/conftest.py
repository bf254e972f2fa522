"""Fixtures: an in-process hub and a session (graphmind_server.testing.pytest_plugin), the loopback
fake provider speaking the OpenAI wire format (graphmind_openai.testing.FakeOpenAI) that the SDK's
own models reach through an `AsyncOpenAI(base_url=...)`, the SDK's trace export off unless a test
turns it on (it would try to post traces to OpenAI), and the instrumentation undone after each test."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from agents import set_tracing_disabled

from graphmind_openai_agents import uninstrument_openai_agents
from graphmind_server.testing import pytest_plugin as shared
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)

sys.path.insert(0, os.path.dirname(__file__))  # agents_helpers, next to the tests (importlib mode)

fakehub = shared.fakehub
gm = shared.gm


@pytest.fixture(autouse=True)
def _sdk_offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    set_tracing_disabled(True)
    yield
    uninstrument_openai_agents()
