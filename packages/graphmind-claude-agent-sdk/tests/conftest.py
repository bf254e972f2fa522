"""Fixtures: a real hub process, the loopback Anthropic fake, and options for an offline CLI session.

The SDK's bundled CLI runs a whole session offline in about a second against the fake (named by
`ANTHROPIC_BASE_URL` in the options' env). It writes to its config and working directories: each
test gives it its own (`CLAUDE_CONFIG_DIR`, `cwd`). Non-essential traffic (the session-title request)
is turned off so the fake's script sees only the agent's turns.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphmind
from graphmind_anthropic.testing import FakeAnthropic
from graphmind_server.testing import HubProcess

sys.path.insert(0, os.path.dirname(__file__))  # claude_helpers, next to the tests (importlib mode)


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubProcess]:
    with HubProcess(tmp_path / "hub.db") as h:
        yield h
    assert "Traceback" not in h.stderr, h.stderr


@pytest.fixture
def gm(hub: HubProcess) -> Iterator[graphmind.Client]:
    client = graphmind.Client(app="claude-agent-e2e", url=hub.ingest_url)
    assert client.ready(5)
    yield client
    client.dispose()


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as provider:
        yield provider
