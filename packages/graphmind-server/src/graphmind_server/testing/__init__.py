"""Helpers for testing against a real hub: a hub subprocess, a frame-level fake app, the kit's hub.

`HubProcess` runs `python -m graphmind_server serve --port 0 --db PATH` and parses its listening
line; `FakeApp` speaks protocol v1 frame by frame (no SDK needed), for hub and viewer tests;
`KitHub` runs core's gate-matrix kit against a `HubProcess` through the viewer's own API.
"""

from ._fakeapp import FakeApp
from ._kit_hub import HubRefused, KitHub
from ._process import HubProcess, HubStartError, api_call, in_thread, wait_for

__all__ = [
    "FakeApp",
    "HubProcess",
    "HubRefused",
    "HubStartError",
    "KitHub",
    "api_call",
    "in_thread",
    "wait_for",
]
