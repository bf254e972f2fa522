"""`replay=` and the GRAPHMIND_REPLAY* variables (docs/replay.md, "Settings").

A replay that cannot be set up raises (one line): running live instead would make every model and
tool call the user asked not to make (docs/conformance.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import CassetteError

POLICIES = ("hold", "live", "fail")
# `only`: which calls the recording answers; the others run live (docs/testing.md, "Replay what you choose")
ONLY = ("llm", "tool")
ENV = "GRAPHMIND_REPLAY"
# where a replayed process writes the divergences it met (the `graphmind replay` command prints them)
REPORT_ENV = "GRAPHMIND_REPLAY_REPORT"
# option key -> variable
_ENV_FIELDS = {
    "on_divergence": "GRAPHMIND_REPLAY_ON_DIVERGENCE",
    "ignore_keys": "GRAPHMIND_REPLAY_IGNORE_KEYS",
    "fork": "GRAPHMIND_REPLAY_FORK",
    "output": "GRAPHMIND_REPLAY_FORK_OUTPUT",
    "input": "GRAPHMIND_REPLAY_FORK_INPUT",
    "until": "GRAPHMIND_REPLAY_UNTIL",
    "safe": "GRAPHMIND_REPLAY_SAFE",
    "only": "GRAPHMIND_REPLAY_ONLY",
}
# `graphmind replay --each` names its batch here: every run.started of the replaying client carries
# it as `replayBatch`, so the hub lists a batch's pairs from its runs (docs/replay.md).
BATCH_ENV = "GRAPHMIND_REPLAY_BATCH"
_KEYS = ("source", *_ENV_FIELDS, "batch")
NOTHING: Any = object()


@dataclass(frozen=True)
class ReplaySettings:
    source: str
    on_divergence: str | None = None  # None: hold when attached, else fail
    ignore_keys: tuple[str, ...] = ()
    fork: str | None = None
    output: Any = NOTHING  # the forked node's new output
    input: Any = NOTHING  # the forked node's edited input
    until: str | None = None
    # Safe mode for the calls that run live once the replay left its recording (docs/effects.md):
    # off, hold (None: the default), simulate; `fail` (the pytest plugin): such a write fails the test.
    safe: str | None = None
    # "llm": only model calls replay, tools run live; "tool": the reverse; None: every call replays
    only: str | None = None
    batch: str | None = None  # the `graphmind replay --each` batch this replay belongs to


def resolve(option: Any, environ: Mapping[str, str]) -> ReplaySettings | None:
    if option is None or option is False:
        source = environ.get(ENV, "").strip()
        if not source:
            return None
        raw: dict[str, Any] = {"source": source}
        for key, name in _ENV_FIELDS.items():
            value = environ.get(name)
            if value is not None and value != "":
                raw[key] = _json(name, value) if key in ("output", "input") else value
        if environ.get(BATCH_ENV):
            raw["batch"] = environ[BATCH_ENV]
    elif isinstance(option, (str, os.PathLike)):
        raw = {"source": os.fspath(option)}
    elif isinstance(option, Mapping):
        unknown = sorted(set(option) - set(_KEYS))
        if unknown:
            raise CassetteError(f"graphmind: replay= takes {', '.join(_KEYS)} (got {', '.join(unknown)})")
        raw = dict(option)
    else:
        raise CassetteError(
            f"graphmind: replay= takes a cassette path or a dict (got {type(option).__name__})"
        )
    return _settings(raw)


def _json(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CassetteError(f"graphmind: {name} must be JSON ({exc.msg}): {text[:60]!r}") from None


def _settings(raw: dict[str, Any]) -> ReplaySettings:
    source = raw.get("source")
    if not isinstance(source, (str, os.PathLike)) or not os.fspath(source):
        raise CassetteError("graphmind: replay needs a cassette path (source)")
    policy = raw.get("on_divergence")
    if policy is not None:
        policy = str(policy).strip().lower()
        if policy not in POLICIES:
            raise CassetteError(
                f"graphmind: on_divergence must be one of {', '.join(POLICIES)} (got {policy!r})"
            )
    keys = raw.get("ignore_keys") or ()
    if isinstance(keys, str):
        keys = [k.strip() for k in keys.split(",")]
    ignore = tuple(str(k) for k in keys if str(k))
    fork = raw.get("fork")
    output, edited = raw.get("output", NOTHING), raw.get("input", NOTHING)
    if fork is None and (output is not NOTHING or edited is not NOTHING):
        raise CassetteError("graphmind: a fork output or input needs the node to fork at (fork=)")
    if fork is not None and (output is NOTHING) == (edited is NOTHING):
        raise CassetteError("graphmind: a fork takes exactly one of output= or input=")
    until = raw.get("until")
    only = raw.get("only")
    if only is not None:
        only = str(only).strip().lower() or None
        if only is not None and only not in ONLY:
            raise CassetteError(
                f"graphmind: replay only= (GRAPHMIND_REPLAY_ONLY) must be one of {', '.join(ONLY)} (got {only!r})"
            )
    return ReplaySettings(
        os.fspath(source),
        policy,
        ignore,
        None if fork is None else str(fork),
        output,
        edited,
        None if until is None else str(until),
        None if raw.get("safe") is None else str(raw["safe"]),
        only,
        None if raw.get("batch") is None else str(raw["batch"]),
    )
