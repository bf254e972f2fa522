"""Replay's public names (docs/replay.md), for a tool that sets a replay up for another process, as
the hub's `graphmind replay` command does, and checks the cassette before that process starts.

- `Cassette.load(path)`: a `graphmind record` file (jsonl) read as a replay reads it; `len()` is
  how many node executions it holds, `find(selector)` the one an instance id, `<nodeId>#<n>` or a
  seq names (`CassetteError` when none does).
- `CassetteError`: a cassette or a replay setting that cannot be used (one line, for the user).
- `ENV` (`GRAPHMIND_REPLAY`, the cassette's path) and `VARIABLES`, the variable of each other
  setting (`on_divergence`, `ignore_keys`, `fork`, `output`, `input`, `until`, `safe`, `only`); `POLICIES`, the
  values of `on_divergence`; `REPORT_ENV`, the file a replayed process writes its divergences to.
- `answer_of(events_or_cassette, node=None)`: a run's final answer (its last model step's reply, as
  text when it holds one) or a chosen node's output, the one rule `graphmind test new` asserts and
  `graphmind replay --each` compares; `ONLY`, the values of `only` (`GRAPHMIND_REPLAY_ONLY`);
  `BATCH_ENV`, the variable naming a `--each` batch (run.started's `replayBatch`).
- `write_cassette`, `ReplayDivergence`, `ReplayedError`: as `graphmind.testing` and `graphmind` name them;
  `UnrecordedWrite`, the `ReplayDivergence` of a write call the recording did not have (docs/effects.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._replay.answer import Answer, answer_of, text_of
from ._replay.cassette import Cassette, Recorded, write_cassette
from ._replay.errors import CassetteError, ReplayDivergence, ReplayedError, UnrecordedWrite
from ._replay.settings import _ENV_FIELDS, BATCH_ENV, ENV, ONLY, POLICIES, REPORT_ENV

VARIABLES: Mapping[str, str] = MappingProxyType(_ENV_FIELDS)

__all__ = [
    "BATCH_ENV",
    "ENV",
    "ONLY",
    "POLICIES",
    "REPORT_ENV",
    "VARIABLES",
    "Answer",
    "Cassette",
    "CassetteError",
    "Recorded",
    "ReplayDivergence",
    "ReplayedError",
    "UnrecordedWrite",
    "answer_of",
    "text_of",
    "write_cassette",
]
