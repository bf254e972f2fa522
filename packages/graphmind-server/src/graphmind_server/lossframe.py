"""The `dropped` frame (issue 38): an app's per-run totals of events it will never deliver, by reason
(docs/protocol.md, "Flow control and losses"), checked and merged into the runs' rows."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .store.derive import text as clean_text
from .store.ops import RecordDropped
from .store.store import Store

MAX_DROPPED_RUNS = 10_000  # runs in one `dropped` frame (an SDK keeps its newest 1,000)
MAX_COUNT = 2**63 - 1
MAX_REASON_CHARS = 64


def take_dropped(store: Store, client_id: str, app: str, frame: dict[str, Any]) -> str | None:
    """Queues the frame's totals for the writer; or why the frame is refused (nothing taken)."""
    runs = dropped_runs(frame.get("runs"))
    if runs is None:
        return "a dropped frame needs 'runs': {runId: {reason: a whole number >= 0}}"
    if runs:
        done = store.submit(RecordDropped(client_id, app, runs, time.time() * 1000.0))
        done.add_done_callback(_retrieve)
    return None


def dropped_runs(value: Any) -> dict[str, dict[str, int]] | None:
    """A `dropped` frame's `runs`, checked ({runId: {reason: count}}), without the "" run (events
    of no known run); None when it is not that shape."""
    if not isinstance(value, dict) or len(value) > MAX_DROPPED_RUNS:
        return None
    runs: dict[str, dict[str, int]] = {}
    for run_id, reasons in value.items():
        if not isinstance(reasons, dict) or clean_text(run_id) != run_id:
            return None
        counts: dict[str, int] = {}
        for reason, count in reasons.items():
            if (
                type(count) is not int
                or not 0 <= count <= MAX_COUNT
                or not reason
                or len(reason) > MAX_REASON_CHARS
            ):
                return None
            if count:
                counts[clean_text(reason)] = count
        if run_id and counts:
            runs[run_id] = counts
    return runs


def _retrieve(done: asyncio.Future[Any]) -> None:
    """A RecordDropped that failed was reported by the writer; only take the exception off the future."""
    if not done.cancelled():
        done.exception()
