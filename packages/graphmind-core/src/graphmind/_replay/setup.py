"""What a client builds for a replay, and the command line a run records in its meta."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from .cassette import Cassette
from .replayer import Replayer
from .settings import resolve


def build_replay(option: Any, environ: Mapping[str, str]) -> Replayer | None:
    """The client's Replayer (`replay=`, else GRAPHMIND_REPLAY), or None. Raises CassetteError (one
    line) for a replay that cannot be set up: going live instead would make the calls it should not.
    A Replayer given as it is (the pytest plugin's, for a client `configure()` builds mid-test) goes
    on matching where the test's earlier client left off."""
    if isinstance(option, Replayer):
        return option
    settings = resolve(option, environ)
    if settings is None:
        return None
    return Replayer(Cassette.load(settings.source), settings)


def command_line() -> dict[str, Any]:
    """`argv`, `cwd` and `executable` of this process, for run meta (not recorded under
    GRAPHMIND_HIDE_INPUTS): the viewer's fork command runs the app with the same interpreter (a
    venv's python, not whichever `python` is first on the PATH)."""
    meta: dict[str, Any] = {"argv": list(sys.argv)}
    try:
        meta["cwd"] = os.getcwd()
    except OSError:  # the working directory was removed
        pass
    if sys.executable:  # empty when the interpreter cannot say (embedded Python)
        meta["executable"] = sys.executable
    return meta
