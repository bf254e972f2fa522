"""Fixtures: an isolated GRAPHMIND_HOME, the in-process hub and a session attached to it (FakeHub),
and the kit on both hubs (`kit_hub`: FakeHub and the real hub process). The scripted model and the
counting tools are in adk_helpers.py."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("google.adk", reason="google-adk needs Python 3.11")

from graphmind_server.testing import pytest_plugin as shared
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)

# The helpers module sits next to the tests; importlib mode does not put this folder on sys.path.
sys.path.insert(0, os.path.dirname(__file__))

fakehub = shared.fakehub
gm = shared.gm


@pytest.fixture(autouse=True)
def _own_graphmind_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # A token file a killed hub left in the shared ~/.graphmind must not detach these tests' clients.
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path_factory.getbasetemp() / "graphmind-home"))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    monkeypatch.delenv("GRAPHMIND_TOKEN_FILE", raising=False)
