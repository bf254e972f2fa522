"""pytest plugin (`-p gm_suite_litellm`): `instrument_litellm()` before any test module imports litellm's functions.

Used by `run_suite.py` to run litellm's own mocked unit tests instrumented: every
`litellm.completion` / `acompletion` / `text_completion` / `responses` / `embedding` call (and the
async twins) is a gated `llm` node (docs/litellm.md).
"""

from __future__ import annotations

from typing import Any

import gm_suite_report as report


def pytest_configure(config: Any) -> None:
    # Not in pytest-xdist's controller, which runs no test: importing the framework there (seconds
    # under load) would be the harness's cost, not the app's. Workers and `-n 0` runs instrument.
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    from graphmind_litellm import instrument_litellm

    if instrument_litellm():
        report.bump("functions_instrumented")


def pytest_runtest_call(item: Any) -> None:
    """After the test's fixtures, before its body: litellm's conftest reloads `litellm` once per
    module (tests/test_litellm/conftest.py, `setup_and_teardown`: `importlib.reload(litellm)`),
    which binds the module's functions to fresh originals and drops the patches. Instrumented
    again here, as an app that reloads litellm would have to: undo (the functions are no longer
    ours, so it only forgets them), then instrument."""
    import litellm

    from graphmind.adapter._hooks import is_wrapper

    if not is_wrapper(litellm.completion):
        from graphmind_litellm import instrument_litellm, uninstrument_litellm

        uninstrument_litellm()
        if instrument_litellm():
            report.bump("reinstrumented_after_reload")


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
