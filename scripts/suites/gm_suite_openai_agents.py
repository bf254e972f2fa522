"""pytest plugin (`-p gm_suite_openai_agents`): `instrument_openai_agents()` before the suite runs.

Used by `run_suite.py` to run the Agents SDK's own offline tests instrumented: every model call of
every agent run (the suite's fake models included), every function tool, handoff and guardrail is
a node (docs/openai-agents.md).
"""

from __future__ import annotations

from typing import Any

import gm_suite_report as report


def pytest_configure(config: Any) -> None:
    # Not in pytest-xdist's controller, which runs no test (see gm_suite_litellm.py).
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    from graphmind_openai_agents import instrument_openai_agents

    if instrument_openai_agents():
        report.bump("functions_instrumented")


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
