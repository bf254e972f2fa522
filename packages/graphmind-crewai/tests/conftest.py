"""Fixtures. CrewAI writes under `~/.config` and `~/.local` when it is imported (its storage,
settings and telemetry ids): HOME is a fresh temporary directory before anything imports it, and
its telemetry and trace export are off (no network). The real hub (one `graphmind serve` per module)
and the kit's both-hubs fixture come from graphmind_server.testing.pytest_plugin."""

from __future__ import annotations

import os
import sys
import tempfile

os.environ["HOME"] = tempfile.mkdtemp(prefix="graphmind-crewai-home-")
os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
os.environ["OTEL_SDK_DISABLED"] = "true"
os.environ.pop("OPENAI_API_KEY", None)

from collections.abc import Iterator

import pytest

from graphmind_crewai import uninstrument_crewai
from graphmind_server.testing import pytest_plugin as shared
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401

sys.path.insert(0, os.path.dirname(__file__))  # crew_helpers, next to the tests (importlib mode)

fakehub = shared.fakehub
gm = shared.gm


@pytest.fixture(autouse=True)
def _undo() -> Iterator[None]:
    yield
    uninstrument_crewai()
