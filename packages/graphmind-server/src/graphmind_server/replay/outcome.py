"""What one replay of a recorded run came to, read off the two runs' events: the one rule
`graphmind replay --each` prints and `GET /api/replays/batches/{id}` shows (docs/replay.md,
"Many runs under one change").

- **diverged at <node>**: a call differed from the recording (the replay's `fail` divergence, its
  `node.error`, names `<nodeId>#<n>`);
- **failed**: the replay ended in error, never ended, or its command exited non-zero without a
  divergence;
- **same answer** / **different answer**: the final answer (graphmind.replay.answer_of) against the
  recorded one.

The cost the replay saved is the recorded usage of the model calls it answered from the recording,
priced as the hub prices a run (store/usage.py, store/prices.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from graphmind.replay import answer_of

from ..store import prices
from ..store import usage as tokens
from ..store.usage import answered_model, started_model

SAME, DIFFERENT, DIVERGED, FAILED = "same answer", "different answer", "diverged", "failed"
RESULTS = (SAME, DIFFERENT, DIVERGED, FAILED)
_DIVERGED_AT = re.compile(r"^replay diverged at (\S+?): ")


@dataclass
class Outcome:
    result: str
    at: str | None = None  # the diverging node (`llm:step#1`)
    why: str = ""  # for `failed` and `diverged`: one line
    expected: Any = None  # the recorded answer
    answer: Any = None  # the replay's
    saved_usd: float = 0.0

    @property
    def label(self) -> str:
        return f"diverged at {self.at}" if self.result == DIVERGED and self.at else self.result

    @property
    def differs(self) -> bool:
        return self.result != SAME

    def to_api(self) -> dict[str, Any]:
        out = asdict(self)
        out["savedUsd"] = round(out.pop("saved_usd"), 8)
        out["label"] = self.label
        return out


def divergence(events: Iterable[dict[str, Any]]) -> tuple[str, str] | None:
    """(`<nodeId>#<n>`, the first line) of the replay's first divergence, or None."""
    for event in events:
        if event.get("type") != "node.error":
            continue
        error = event.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        found = _DIVERGED_AT.match(message) if isinstance(message, str) else None
        if found and isinstance(message, str):
            return found.group(1), message.splitlines()[0]
    return None


def judge(
    recorded: list[dict[str, Any]] | None,
    replay: list[dict[str, Any]],
    exit_code: int | None = None,
) -> Outcome:
    """The outcome of `replay` (its events) against `recorded` (None: the recording is not at hand,
    so only a divergence or a failure can be told)."""
    expected = _answer(recorded) if recorded is not None else None
    saved = saved_usd(recorded, replay) if recorded is not None else 0.0
    diverged = divergence(replay)
    if diverged is not None:
        return Outcome(DIVERGED, diverged[0], diverged[1], expected, None, saved)
    finished = [e for e in replay if e.get("type") == "run.finished"]
    if not finished:
        return Outcome(FAILED, why="the replay never ended", expected=expected, saved_usd=saved)
    if finished[-1].get("status") != "finished" or (exit_code is not None and exit_code != 0):
        error = finished[-1].get("error")
        why = error.get("message") if isinstance(error, dict) else None
        why = str(why).splitlines()[0] if why else f"the command exited {exit_code}"
        return Outcome(FAILED, why=why, expected=expected, saved_usd=saved)
    answer = _answer(replay)
    if recorded is None:
        return Outcome(SAME, why="the recording is not in this hub: no divergence", answer=answer)
    result = SAME if answer == expected else DIFFERENT
    return Outcome(result, expected=expected, answer=answer, saved_usd=saved)


def _answer(events: list[dict[str, Any]]) -> Any:
    found = answer_of(events)
    return None if found is None else found.value


def saved_usd(recorded: list[dict[str, Any]], replay: list[dict[str, Any]]) -> float:
    """The recorded usage of the model calls `replay` answered from the recording, priced."""
    answered = set(_replayed(replay))
    kinds: dict[str, tuple[str, int, str | None]] = {}  # instance -> (node id, occurrence, model)
    seen: dict[str, int] = {}
    total: dict[str, Any] = {}
    for event in recorded:
        instance, node_id = event.get("instanceId"), event.get("nodeId")
        if not isinstance(instance, str) or not isinstance(node_id, str):
            continue
        if event.get("type") == "node.started":
            seen[node_id] = seen.get(node_id, 0) + 1
            if event.get("kind") == "llm":
                kinds[instance] = (node_id, seen[node_id], started_model(event))
        elif event.get("type") == "node.finished" and instance in kinds:
            node, occurrence, model = kinds.pop(instance)
            if (node, occurrence) in answered:
                tokens.add(total, model or answered_model(event), event.get("usage"))
    cost = tokens.to_api(total, prices.price)["costUsd"]
    return float(cost or 0.0)


def _replayed(events: list[dict[str, Any]]) -> Iterable[tuple[str, int]]:
    """(node id, occurrence) of each model call the replay answered from the recording."""
    seen: dict[str, int] = {}
    started: dict[str, tuple[str, int]] = {}
    for event in events:
        instance, node_id = event.get("instanceId"), event.get("nodeId")
        if not isinstance(instance, str) or not isinstance(node_id, str):
            continue
        if event.get("type") == "node.started" and event.get("kind") == "llm":
            seen[node_id] = seen.get(node_id, 0) + 1
            started[instance] = (node_id, seen[node_id])
        elif event.get("type") == "node.finished" and event.get("replayed") and instance in started:
            yield started[instance]
