"""An MCP multi-round tool call (SEP-2322) as one call: one node, its rounds recorded in it.

A server that needs input answers `tools/call` with an `InputRequiredResult`; the mcp SDK's
`Client.call_tool` fulfils its `input_requests` and re-sends `tools/call` with the same name and
arguments and the new `request_state`, once per round, until a final result
(`mcp/client/_input_required.py:52` `run_input_required_driver`, the re-send at line 95
`current = await retry(responses, current.request_state)`; driven from `mcp/client/client.py:839`
`Client.call_tool` -> `_drive_input_required`, each `retry` a `self.session.call_tool(...,
allow_input_required=True)` at line 811; mcp 2.3.0). The rounds are protocol mechanics of one app
call, not an agent calling a tool again and again: the loop guard must not see them as a streak.

- Instrumented `mcp.client.Client` (`instrument_mcp(client)`): its `call_tool`, the app-level call,
  is the node. While it runs, `CURRENT` names it; the session's hook sees each round and records it
  in that node (a `node.token` line per round) instead of starting a node of its own.
- Only the session instrumented (`instrument_mcp(client.session)`): the first round is the node
  (its output the `InputRequiredResult`); a re-send (a `request_state` or `input_responses` given)
  continues that call and goes straight through, no node, no streak.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

from graphmind.adapter import NodeExecution

# The app-level call (an instrumented `Client.call_tool`) the calling task is inside, if any.
CURRENT: ContextVar[Rounds | None] = ContextVar("graphmind_mcp_rounds", default=None)


def is_continuation(kwargs: dict[str, Any]) -> bool:
    """A `ClientSession.call_tool` that re-sends a call answered `InputRequiredResult` before."""
    return kwargs.get("request_state") is not None or kwargs.get("input_responses") is not None


class Rounds:
    """The rounds of one app-level call, written into its node as they happen."""

    __slots__ = ("count", "name", "node")

    def __init__(self, name: str) -> None:
        self.name = name
        self.node: NodeExecution | None = None  # set once the node has started
        self.count = 0

    def owns(self, name: str) -> bool:
        return self.node is not None and name == self.name

    def record(self, result: Any) -> None:
        """One round's answer, as one JSON line on the node: what it asked for, or that it ended."""
        self.count += 1
        entry: dict[str, Any] = {"round": self.count}
        if type(result).__name__ == "InputRequiredResult":
            requests = getattr(result, "input_requests", None) or {}
            entry["inputRequests"] = sorted(str(key) for key in requests)
            if not requests:
                entry["stateOnly"] = True  # the SDK waits and re-sends with the state alone
        else:
            entry["result"] = "error" if getattr(result, "is_error", False) is True else "final"
        if self.node is not None:
            self.node.token(json.dumps(entry) + "\n")

    def failed(self, exc: BaseException) -> None:
        """A round raised (a JSON-RPC error, a timeout): recorded before the error reaches the node."""
        self.count += 1
        if self.node is not None:
            self.node.token(json.dumps({"round": self.count, "error": type(exc).__name__}) + "\n")
