"""Every test of the workspace gets its own GRAPHMIND_HOME (core's conftest does the same for its own
package run alone).

An app takes the token a hub wrote for its port from $GRAPHMIND_HOME/token-<port> and then refuses a
listener that cannot prove it (docs/security.md). A file that a killed hub left in the shared
~/.graphmind for the port a FakeHub happens to get would otherwise detach a later test's client.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _own_graphmind_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path_factory.getbasetemp() / "graphmind-home"))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    monkeypatch.delenv("GRAPHMIND_TOKEN_FILE", raising=False)
