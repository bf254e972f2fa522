"""What a client builds for a replay, and the command line a run records in its meta."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from .cassette import Cassette, CassetteError
from .replayer import Replayer
from .settings import NOTHING, resolve


def build_replay(option: Any, environ: Mapping[str, str]) -> Replayer | None:
    """The client's Replayer (`replay=`, else GRAPHMIND_REPLAY), or None. Raises CassetteError (one
    line) for a replay that cannot be set up: going live instead would make the calls it should not."""
    settings = resolve(option, environ)
    if settings is None:
        return None
    if settings.input is not NOTHING:
        raise CassetteError(
            "graphmind: a fork with an edited input needs the engine's edit path, which this build does not "
            "have yet; fork with an output (--output) instead"
        )
    return Replayer(Cassette.load(settings.source), settings)


def command_line() -> dict[str, Any]:
    """`argv` and `cwd` of this process, for run meta (not recorded under GRAPHMIND_HIDE_INPUTS)."""
    meta: dict[str, Any] = {"argv": list(sys.argv)}
    try:
        meta["cwd"] = os.getcwd()
    except OSError:  # the working directory was removed
        pass
    return meta
