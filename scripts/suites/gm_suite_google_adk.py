"""pytest plugin (`-p gm_suite_google_adk`): every ADK `Runner` built in the suite gets a `GraphmindPlugin`.

Used by `run_suite.py` to run ADK's own unit tests instrumented: `Runner.__init__` (and so
`InMemoryRunner`'s, which calls it) ends with `instrument_runner(self)`, so every model call and tool
call a test makes through a runner is a gated node, as in an app that passes `plugins=[GraphmindPlugin()]`.
Tests that drive an agent without a runner (an InvocationContext of their own) run as they are.
"""

from __future__ import annotations

import functools
from typing import Any

import gm_suite_report as report


def pytest_configure(config: Any) -> None:
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return  # pytest-xdist's controller runs no test
    from google.adk.runners import Runner

    from graphmind_google_adk import instrument_runner

    original = Runner.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        instrument_runner(self)
        report.bump("runners_instrumented")

    Runner.__init__ = __init__  # type: ignore[method-assign]


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
