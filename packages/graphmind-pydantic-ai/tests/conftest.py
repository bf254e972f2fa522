"""Fixtures: core's in-process FakeHub and a session attached to it (`fakehub`, `gm`), and the kit
on both hubs (`kit_hub`: FakeHub, then the real hub process)."""

from __future__ import annotations

import os
import sys

from graphmind_server.testing import pytest_plugin as shared
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)

# The helpers module sits next to the tests; importlib mode does not put this folder on sys.path.
sys.path.insert(0, os.path.dirname(__file__))

fakehub = shared.fakehub
gm = shared.gm
