"""Shared by the suite plugins: at the end of a pytest process, what GraphMind did, as one JSON file.

The file is `$GRAPHMIND_SUITE_REPORT.<worker>.json` (one per pytest-xdist worker, `main` without
xdist); `run_suite.py` adds them up.
"""

from __future__ import annotations

import json
import os
from typing import Any

import graphmind

counts: dict[str, int] = {}


def bump(name: str) -> None:
    counts[name] = counts.get(name, 0) + 1


def write(config: Any) -> None:
    target = os.environ.get("GRAPHMIND_SUITE_REPORT")
    if not target:
        return
    client = graphmind.get_client()
    client.dispose()  # finishes the implicit run and flushes what is still buffered
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{target}.{worker}.json", "w", encoding="utf-8") as out:
        json.dump({**counts, "stats": client.stats()}, out)
