"""End-to-end fixtures: the real hub as a subprocess on an ephemeral loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmind_server.testing import HubProcess


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubProcess]:
    """`graphmind serve --port 0 --db <tmp>`; stopped (SIGINT, then SIGKILL) after the test.

    A test fails if the hub wrote a traceback to stderr: every error it reports is one line.
    """
    with HubProcess(tmp_path / "hub.db") as h:
        yield h
    assert "Traceback" not in h.stderr, h.stderr
