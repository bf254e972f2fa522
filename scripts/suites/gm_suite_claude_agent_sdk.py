"""pytest plugin (`-p gm_suite_claude_agent_sdk`): the process-wide form on, before any test imports
the SDK's client: every `query()` and `ClaudeSDKClient` session's options instrumented (hooks, the
model gate) and each session one run.

Used by `run_suite.py` to run the Claude Agent SDK's own test suite instrumented (its tests talk to
mock transports, so most sessions never start the CLI: what they see is the options GraphMind gives
the transport and the hook callbacks it registers).
"""

from __future__ import annotations

from typing import Any

import gm_suite_report as report

from graphmind_claude_agent_sdk import instrument_claude_agent_sdk

if instrument_claude_agent_sdk():
    report.bump("clients_instrumented")


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
