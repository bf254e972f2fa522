"""Helpers for testing against a real hub: a hub subprocess and a frame-level fake app.

`HubProcess` runs `python -m graphmind_server serve --port 0 --db PATH` and parses its listening
line; `FakeApp` speaks protocol v1 frame by frame (no SDK needed), for hub and viewer tests.
"""

from ._fakeapp import FakeApp
from ._process import HubProcess, HubStartError, api_call, in_thread, wait_for

__all__ = ["FakeApp", "HubProcess", "HubStartError", "api_call", "in_thread", "wait_for"]
