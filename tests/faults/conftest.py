"""The fault suite: the hub and the SDK faulted the way a crashing hub, a hostile page and a runaway
agent would (issue 19). Every test prints its figure (`-s` shows them; docs/reliability.md keeps
the last full-scale ones).

Sizes scale with GRAPHMIND_FAULT_SCALE: `1` (the default) fits the default CI run (~2 minutes for
the whole folder on 2 cores); `nox -s faults` sets `full`: 10,000 examples per fuzzed route,
8,000 events of 500 KB, a 10 s tight loop, 100,000 events before dispose().
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmind_server.testing import HubProcess

FULL = os.environ.get("GRAPHMIND_FAULT_SCALE", "").strip().lower() == "full"


def scaled(ci: int, full: int) -> int:
    return full if FULL else ci


def rss_mb(pid: int | None = None) -> float:
    """Resident memory of a process (this one by default), in MB, from /proc."""
    status = Path(f"/proc/{pid or os.getpid()}/status").read_text()
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc status")


def figure(name: str, value: object) -> None:
    """One line per measured figure, for the log and docs/reliability.md."""
    print(f"\n[fault figure] {name}: {value}", flush=True)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """GRAPHMIND_HOME for this test: token files go to a temporary directory, never ~/.graphmind."""
    path = tmp_path / "home"
    monkeypatch.setenv("GRAPHMIND_HOME", str(path))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    return path


@pytest.fixture
def hub(tmp_path: Path, home: Path) -> Iterator[HubProcess]:
    with HubProcess(tmp_path / "hub.db") as h:
        yield h
    assert "Traceback" not in h.stderr, h.stderr
