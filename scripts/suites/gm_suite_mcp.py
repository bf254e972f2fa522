"""pytest plugin (`-p gm_suite_mcp`): every `ClientSession` and every `mcp.client.Client` goes through `instrument_mcp`.

Used by `run_suite.py` to run the mcp SDK's own test suite instrumented. Both constructors are
wrapped before any test module imports them: a session made by hand is instrumented as a session
(each `call_tool` a node), a `Client` as the app-level call (`Client.call_tool` one node, its
`InputRequiredResult` rounds in it; graphmind_mcp/_rounds.py). A `Client`'s own session is
instrumented too, so its direct `client.session.call_tool(...)` calls are nodes as well.
"""

from __future__ import annotations

import functools
from typing import Any

import gm_suite_report as report
from mcp import ClientSession
from mcp.client import Client

from graphmind_mcp import instrument_mcp


def _instrumenting(cls: type, init: str) -> None:
    original = getattr(cls, init)

    @functools.wraps(original)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        instrument_mcp(self)
        report.bump(f"{cls.__name__}_instrumented")

    setattr(cls, init, wrapped)


_instrumenting(ClientSession, "__init__")
_instrumenting(Client, "__post_init__")  # a dataclass: its generated __init__ calls __post_init__


def pytest_unconfigure(config: Any) -> None:
    report.write(config)
