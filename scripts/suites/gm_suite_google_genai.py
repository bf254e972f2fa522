"""pytest plugin (`-p gm_suite_google_genai`): every `Models` and `AsyncModels` a test builds (a
`genai.Client` builds one of each; the SDK's AFC tests build them alone over a mocked API client)
goes through `instrument_google_genai` on construction.

Used by `run_suite.py` to run the SDK's own tests instrumented: every model request is a gated
`llm:step` node, every function automatic function calling runs a `tool:<name>` node
(docs/google-genai.md).
"""

from __future__ import annotations

import functools
from typing import Any

import gm_suite_report as report


def pytest_configure(config: Any) -> None:
    # Not in pytest-xdist's controller, which runs no test (see gm_suite_litellm.py).
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    from google.genai.models import AsyncModels, Models

    from graphmind_google_genai import instrument_google_genai

    for cls in (Models, AsyncModels):
        original = cls.__init__

        def init(self: Any, *args: Any, __original: Any = original, **kwargs: Any) -> None:
            __original(self, *args, **kwargs)
            if instrument_google_genai(self) is self and "_graphmind_google_genai" in vars(self):
                report.bump("models_instrumented")

        cls.__init__ = functools.wraps(original)(init)  # type: ignore[method-assign]


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
