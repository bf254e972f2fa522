"""pytest plugin (`-p gm_suite_llamaindex`): `instrument_llamaindex()` for the whole process.

Used by `run_suite.py` to run llama-index-core's own unit tests instrumented: the span and event
handlers go on LlamaIndex's root dispatcher before any test runs, so every agent, workflow step,
retriever, query engine, LLM and tool call of every test is observed (docs/llamaindex.md).
"""

from __future__ import annotations

from typing import Any

import gm_suite_report as report


def pytest_configure(config: Any) -> None:
    # Not in pytest-xdist's controller, which runs no test: importing the framework there (seconds
    # under load) would be the harness's cost, not the app's. Workers and `-n 0` runs instrument.
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    from graphmind_llamaindex import instrument_llamaindex

    if instrument_llamaindex():
        report.bump("handlers_installed")


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
