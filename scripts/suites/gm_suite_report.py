"""Shared by the suite plugins: at the end of a pytest process, what GraphMind did, as one JSON file.

The file is `$GRAPHMIND_SUITE_REPORT.<worker>.json` (one per pytest-xdist worker, `main` without
xdist); `run_suite.py` adds them up. Loaded as a plugin too (`-p gm_suite_report`): it keeps the
loop guard's warnings (`GRAPHMIND_ON_LOOP=warn`: one per streak, naming the node, logged by the
`graphmind` logger) by the test that was running, which the file holds as `loop_warned`: the calls
an attached app with the default loop policy would have held.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any

import graphmind

counts: dict[str, int] = {}
loop_warned: dict[str, list[str]] = {}
_current = {"test": "(outside any test)"}
# The loop guard's warning (graphmind/_loop/guard.py `loop_warning`): `... possible loop: <name> (<node id>) was called`
_LOOP = re.compile(r"possible loop: .* \((?P<node>[^()]+)\) was called \d+")


def bump(name: str) -> None:
    counts[name] = counts.get(name, 0) + 1


class _LoopWarnings(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            match = _LOOP.search(record.getMessage())
        except Exception:
            return
        if match:
            loop_warned.setdefault(_current["test"], []).append(match.group("node"))


_HANDLER = _LoopWarnings(logging.WARNING)


def pytest_configure(config: Any) -> None:
    logger = logging.getLogger("graphmind")
    if _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)


def pytest_runtest_setup(item: Any) -> None:
    _current["test"] = item.nodeid


def write(config: Any) -> None:
    target = os.environ.get("GRAPHMIND_SUITE_REPORT")
    if not target:
        return
    client = graphmind.get_client()
    client.dispose()  # finishes the implicit run and flushes what is still buffered
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{target}.{worker}.json", "w", encoding="utf-8") as out:
        json.dump({**counts, "loop_warned": loop_warned, "stats": client.stats()}, out)
