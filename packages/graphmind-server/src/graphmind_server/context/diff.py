"""What changed in a model step's input since the previous step of the same agent (pure).

Parts are matched by key (kind, role, content hash), so their position does not matter: a
conversation that grew at the end shows exactly the new messages as added. A part whose key is
gone but whose place (path and kind) holds a new one is `changed` (an edited system prompt).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from .breakdown import Counted


def step_diff(
    current: list[Counted], previous: list[Counted], previous_ref: dict[str, Any] | None
) -> dict[str, Any]:
    if previous_ref is None:  # the agent's first model call: nothing to compare with
        return {"previous": None, "added": [], "removed": [], "changed": [], "delta": 0}
    ids = [f"p{i}" for i in range(len(current))]
    waiting: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(previous):
        waiting[c.key].append(i)
    unmatched_now: list[int] = []
    for i, c in enumerate(current):
        if waiting.get(c.key):
            waiting[c.key].pop(0)
        else:
            unmatched_now.append(i)
    gone = sorted(i for rest in waiting.values() for i in rest)
    by_place = {(previous[i].part.path, previous[i].part.kind): i for i in gone}
    changed: list[dict[str, Any]] = []
    added: list[str] = []
    for i in unmatched_now:
        before = by_place.pop((current[i].part.path, current[i].part.kind), None)
        if before is None:
            added.append(ids[i])
        else:
            gone.remove(before)
            changed.append(
                {"id": ids[i], "tokensBefore": previous[before].tokens, "tokensAfter": current[i].tokens}
            )
    removed = [
        {"key": previous[i].key, "label": previous[i].part.label, "tokens": previous[i].tokens} for i in gone
    ]
    delta = sum(c.tokens for c in current) - sum(c.tokens for c in previous)
    return {"previous": previous_ref, "added": added, "removed": removed, "changed": changed, "delta": delta}
