"""End-to-end fixtures: the real hub as a subprocess on an ephemeral loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmind_server.testing import HubProcess


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubProcess]:
    """`graphmind serve --port 0 --db <tmp>`; stopped (SIGINT, then SIGKILL) after the test."""
    with HubProcess(tmp_path / "hub.db") as h:
        yield h
