"""Every test of the workspace gets its own GRAPHMIND_HOME (core's conftest does the same for its own
package run alone).

An app takes the token a hub wrote for its port from $GRAPHMIND_HOME/token-<port> and then refuses a
listener that cannot prove it (docs/security.md). A file that a killed hub left in the shared
~/.graphmind for the port a FakeHub happens to get would otherwise detach a later test's client.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _own_graphmind_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path_factory.getbasetemp() / "graphmind-home"))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    monkeypatch.delenv("GRAPHMIND_TOKEN_FILE", raising=False)


@pytest.hookimpl(optionalhook=True)  # the nox matrix cells run without pytest-xdist
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (pyproject.toml's addopts): the whole suite (`uv run pytest`, as CI runs it) on one
    worker per core, at least 2 (much of it waits on hubs, browsers and README subprocesses) and at
    most 4; a run that names its paths or tests, or passes -s, in one process. Starting workers costs
    more than one file's tests take, and a worker's stdout (the `[fault figure]` lines) is not shown."""
    if config.args_source == pytest.Config.ArgsSource.ARGS or config.getoption("capture") == "no":
        return 0
    return max(2, min(os.cpu_count() or 1, 4))
