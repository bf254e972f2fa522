"""A start-up prune too big to finish before the hub listens (store/retention.py,
PRUNE_BEFORE_LISTEN_EVENTS), done once `graphmind serve` listens: a chunk per writer transaction,
then the search index cleaned of what was deleted (store/index_merge.py), a step at a time."""

from __future__ import annotations

import asyncio
import sys

from . import retention
from .ops import MergeIndex, Prune
from .store import Store

MERGES_AFTER_PRUNE = 100_000  # 200 pages each (~80 GB of index): a bound, should anything keep it busy


async def prune_in_background(store: Store, plan: retention.Plan) -> None:
    """A big start-up prune, once the hub listens: a chunk per writer transaction, each queued after
    what the apps sent meanwhile, so their events keep being stored (store/retention.py)."""
    events = 0
    try:
        for chunk in plan.chunks():
            events += await store.submit(Prune(chunk))
        merge = MergeIndex()
        for _ in range(MERGES_AFTER_PRUNE):  # the index's dead entries, a step per writer transaction
            if not await store.submit(merge):
                break
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the prune is housekeeping: it never takes the hub down
        print(
            f"graphmind: the start-up prune stopped ({exc!r}); it goes on at the next start", file=sys.stderr
        )
        return
    done = retention.Pruned(plan.pruned().over_count, plan.too_old, events, plan.keep_runs, plan.keep_days)
    if (line := done.summary("after start-up, in the background")) is not None:
        print(line, file=sys.stderr, flush=True)
