"""`import graphmind` is cheap (issue 37): nothing heavy until a client is built.

Every script and test process imports graphmind, detached or not; it cost ~105 ms over bare Python
(websockets' client, asyncio, the whole SDK). The bound is relative to bare Python in the same
process, so a loaded machine stretches both sides alike: `-X importtime`'s cumulative time for
`graphmind` against the cumulative time of the modules Python itself imported at start-up
(encodings, site, ...). Before issue 37 the ratio was 10-65 (loaded machine); now it is ~1-2.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

RATIO_BOUND = 4.0  # graphmind's import / bare Python's own start-up imports (median of RUNS)
RUNS = 5
HEAVY = ("websockets", "asyncio", "uuid", "datetime", "decimal", "socket", "graphmind._api.client")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND")}


def _importtime() -> tuple[int, int]:
    """(graphmind's cumulative µs, the start-up imports' cumulative µs) of one fresh process."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import graphmind"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
        check=True,
    )
    graphmind = startup = 0
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2]
        if name.startswith("  ") or not name.startswith(" "):  # only the top level: one space
            continue
        if name.strip() == "graphmind":
            graphmind += int(parts[1])
        else:
            startup += int(parts[1])
    return graphmind, startup


def test_import_graphmind_costs_about_what_bare_pythons_own_start_up_imports_cost() -> None:
    runs = [_importtime() for _ in range(RUNS)]
    ratios = [g / s for g, s in runs if s]
    assert statistics.median(ratios) <= RATIO_BOUND, (
        f"import graphmind / start-up imports: {sorted(round(r, 2) for r in ratios)} (bound {RATIO_BOUND}); "
        f"µs: {runs}"
    )


def test_import_graphmind_loads_none_of_the_heavy_modules() -> None:
    code = f"import sys, graphmind; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=60, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_public_names_load_on_first_use_and_are_the_sdks_own() -> None:
    code = (
        "import graphmind as gm; from graphmind._api.client import Client; from graphmind._base.errors import "
        "RunAborted; print(gm.Client is Client, gm.RunAborted is RunAborted, gm.PROTOCOL_VERSION, "
        "'Client' in dir(gm), gm.wrap(lambda: 7, name='t')())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=60, check=True
    ).stdout
    assert out.split() == ["True", "True", "1", "True", "7"]
    bad = subprocess.run(
        [sys.executable, "-c", "import graphmind; graphmind.nope"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert bad.returncode == 1 and "module 'graphmind' has no attribute 'nope'" in bad.stderr
