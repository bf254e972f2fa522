"""asyncio without importing it: `import graphmind` must not pay for asyncio (~30 ms, issue 37) in an
app that never uses it. No event loop can run, and no future or task can exist, before asyncio is
imported, so "is asyncio imported?" answers every question GraphMind asks of a sync-only app."""

from __future__ import annotations

import sys
from typing import Any

_modules = sys.modules


def running_loop() -> Any:
    """The asyncio loop running in this thread, or None (asyncio's own C check; never imports it)."""
    aio = _modules.get("asyncio")
    return None if aio is None else aio._get_running_loop()
