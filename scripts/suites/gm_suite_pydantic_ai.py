"""pytest plugin (`-p gm_suite_pydantic_ai`): every `Agent` a test builds goes through
`instrument_pydantic_ai` on construction.

Used by `run_suite.py` to run Pydantic AI's own tests instrumented: every model request of every
agent is a gated `llm:step` node, every tool call a `tool:<name>` node (docs/pydantic-ai.md).
"""

from __future__ import annotations

import functools
from typing import Any

import gm_suite_report as report


def pytest_configure(config: Any) -> None:
    # Not in pytest-xdist's controller, which runs no test (see gm_suite_litellm.py).
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    from pydantic_ai import Agent

    from graphmind_pydantic_ai import instrument_pydantic_ai

    original = Agent.__init__

    @functools.wraps(original)
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if instrument_pydantic_ai(self) is self and "_graphmind_pydantic_ai" in vars(self):
            report.bump("agents_instrumented")  # (twice is once: a subclass's __init__ calling ours)

    Agent.__init__ = init  # type: ignore[method-assign]


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
