"""pytest plugin (`-p gm_suite_openai`): every `OpenAI` / `AsyncOpenAI` goes through `instrument_openai`.

Used by `run_suite.py` to run the OpenAI SDK's own test suite instrumented. The constructors are
wrapped before any test module imports a client class, so subclasses (`AzureOpenAI`, ...) and the
clients made by `with_options` / `copy` are instrumented too.
"""

from __future__ import annotations

import functools
from typing import Any

import gm_suite_report as report
import openai

from graphmind_openai import instrument_openai


def _instrumenting(cls: type) -> None:
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        instrument_openai(self)
        report.bump("clients_instrumented")

    cls.__init__ = __init__


for _cls in (openai.OpenAI, openai.AsyncOpenAI):
    _instrumenting(_cls)


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
