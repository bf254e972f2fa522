"""pytest plugin (`-p gm_suite_anthropic`): every `Anthropic` / `AsyncAnthropic` goes through `instrument_anthropic`.

Used by `run_suite.py` to run the Anthropic SDK's own test suite instrumented; same approach as
`gm_suite_openai.py` (the constructors are wrapped before any test module imports a client class).
"""

from __future__ import annotations

import functools
from typing import Any

import anthropic
import gm_suite_report as report

from graphmind_anthropic import instrument_anthropic


def _instrumenting(cls: type) -> None:
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        instrument_anthropic(self)
        report.bump("clients_instrumented")

    cls.__init__ = __init__  # type: ignore[misc]


for _cls in (anthropic.Anthropic, anthropic.AsyncAnthropic):
    _instrumenting(_cls)


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
