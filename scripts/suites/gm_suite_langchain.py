"""pytest plugin (`-p gm_suite_langchain`): one `GraphmindCallbackHandler` on every LangChain run.

Used by `run_suite.py` to run langchain-core's own unit suite instrumented. langchain-core adds
the value of a registered context variable to every callback manager it configures
(`langchain_core/tracers/context.py` `register_configure_hook`, lines 182-212 in 1.8.3; read in
`langchain_core/callbacks/manager.py` `_configure`, lines 2541-2560: `var.get()` for each hook,
added when it is not already among the handlers), so a default value puts the one handler on every run, sync and
async, in every thread.
"""

from __future__ import annotations

import contextvars
from typing import Any

import gm_suite_report as report
from langchain_core.tracers.context import register_configure_hook

from graphmind_langchain import GraphmindCallbackHandler

HANDLER = GraphmindCallbackHandler()
_var: contextvars.ContextVar[GraphmindCallbackHandler | None] = contextvars.ContextVar(
    "graphmind_suite_handler", default=HANDLER
)
register_configure_hook(_var, inheritable=True)


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
