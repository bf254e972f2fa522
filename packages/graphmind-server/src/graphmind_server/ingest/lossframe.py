"""The app's loss frames (docs/protocol.md, "Flow control and losses"): `dropped` (issue 38), its
per-run totals of events it will never deliver, checked and merged into the runs' rows; and
`stored.query` (issue 29), which of its sent events this hub has, answered once everything received
before the question is committed ("Confirming what was stored")."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from graphmind import protocol as proto

from ..store.derive import text as clean_text
from ..store.ops import MissingSeqs, RecordDropped
from ..store.store import Store

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


def take_stored_query(
    store: Store, client_id: str, frame: dict[str, Any], send: Callable[[str], Awaitable[None]]
) -> str | None:
    """Queues the question behind what this connection sent so far; the answer goes out when the
    writer reaches it. Or why the frame is refused (nothing asked)."""
    query_id, ranges = frame.get("id"), stored_ranges(frame.get("seqs"))
    if type(query_id) is not int or ranges is None:
        return (
            "a stored.query needs an integer 'id' and 'seqs': up to "
            f"{proto.MAX_QUERY_RANGES} [first, last] pairs of seqs, first <= last"
        )
    done = store.submit(MissingSeqs(client_id, ranges))

    async def answer() -> None:
        try:
            missing = await done
        except Exception:
            return  # reported by the writer; the app asks again on its next connection
        answer = {"type": proto.STORED_ANSWER, "id": query_id, "missing": missing}
        try:
            await send(json.dumps(answer, separators=(",", ":")))
        except Exception:
            pass  # the connection is gone: the app asks the next hub

    _answers.add(task := asyncio.ensure_future(answer()))
    task.add_done_callback(_answers.discard)
    return None


_answers: set[asyncio.Future[None]] = set()  # answers under way (a task nobody holds may be collected)


def stored_ranges(value: Any) -> list[tuple[int, int]] | None:
    if not isinstance(value, list) or len(value) > proto.MAX_QUERY_RANGES:
        return None
    ranges: list[tuple[int, int]] = []
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2 and all(type(v) is int for v in pair)):
            return None
        lo, hi = pair
        if not 0 <= lo <= hi <= MAX_COUNT:
            return None
        ranges.append((lo, hi))
    return ranges
