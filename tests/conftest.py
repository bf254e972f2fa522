"""End-to-end fixtures: the real hub as a subprocess on an ephemeral loopback port."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmind_server.testing import HubProcess

# Helpers shared by tests in this folder (refund_app.py); importlib mode does not put it on sys.path.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubProcess]:
    """`graphmind serve --port 0 --db <tmp>`; stopped (SIGINT, then SIGKILL) after the test.

    A test fails if the hub wrote a traceback to stderr: every error it reports is one line.
    """
    with HubProcess(tmp_path / "hub.db") as h:
        yield h
    assert "Traceback" not in h.stderr, h.stderr
