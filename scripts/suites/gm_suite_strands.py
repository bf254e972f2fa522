"""pytest plugin (`-p gm_suite_strands`): `instrument_strands()` before the suite runs.

Used by `run_suite.py` to run Strands Agents' own offline tests instrumented: every model call and
tool execution of every agent (the suite's mocked models included) is a gated node, every
invocation a run, every swarm handoff a handoff node (docs/strands.md).
"""

from __future__ import annotations

from typing import Any

import gm_suite_report as report


def pytest_configure(config: Any) -> None:
    # Not in pytest-xdist's controller, which runs no test (see gm_suite_litellm.py).
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    from graphmind_strands import instrument_strands

    if instrument_strands():
        report.bump("functions_instrumented")


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
