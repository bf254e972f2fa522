"""pytest plugin (`-p gm_suite_crewai`): `instrument_crewai()` before the suite runs.

Used by `run_suite.py` to run CrewAI's own offline tests instrumented: every kickoff a run, every
task, model step, tool call and delegation of every crew the suite builds a node (docs/crewai.md).
"""

from __future__ import annotations

from typing import Any

import gm_suite_report as report


def pytest_configure(config: Any) -> None:
    # Not in pytest-xdist's controller, which runs no test (see gm_suite_litellm.py).
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    from graphmind_crewai import instrument_crewai

    if instrument_crewai():
        report.bump("functions_instrumented")


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
