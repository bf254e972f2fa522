"""pytest plugin (`-p gm_suite_litellm`): `instrument_litellm()` before any test module imports litellm's functions.

Used by `run_suite.py` to run litellm's own mocked unit tests instrumented: every
`litellm.completion` / `acompletion` / `text_completion` / `responses` / `embedding` call (and the
async twins) is a gated `llm` node (docs/litellm.md).
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as the suite's own CI sets it

import gm_suite_report as report

from graphmind_litellm import instrument_litellm

if instrument_litellm():
    report.bump("functions_instrumented")


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
