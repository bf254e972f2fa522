"""Fixtures: core's in-process FakeHub and a session attached to it (`fakehub`, `gm`), the kit on
both hubs (`kit_hub`: FakeHub, then the real hub process), the loopback OpenAI fake that Strands'
own `OpenAIModel` reaches (`fake`), and the process-wide instrumentation undone after each test."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import pytest_plugin as shared
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)
from graphmind_strands import uninstrument_strands

# The helpers module sits next to the tests; importlib mode does not put this folder on sys.path.
sys.path.insert(0, os.path.dirname(__file__))

fakehub = shared.fakehub
gm = shared.gm


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as provider:
        yield provider


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    yield
    uninstrument_strands()
