"""The hook points, as one table that drives both instrument and uninstrument.

Each hook is a `graphmind.adapter.Hook` row, an attribute set on the `ClientSession` instance given
(it shadows the class's method), so nothing global changes and another session in the process is
untouched; uninstrument (the row's `Patches`) deletes the attribute (or puts back what the instance
held before) and the class's own method shows through again. A version change of the SDK is one
row here. `tests/test_hooks_upstream.py` fails loudly when a hooked method moves.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from graphmind.adapter import Hook, Patches, RunContext

from ._call import ToolCall, call_tool_node

MARK = "_graphmind_mcp"


@dataclass(eq=False)
class State(Patches):
    """What instrument_mcp did to one session (a `graphmind.adapter.Patches`: undo undoes exactly that)."""

    # The run each call belongs to; None: the calling context's (`gm.run(...)` or the implicit run).
    # graphmind mcp-proxy passes its host session's run (its handlers run in the SDK's own tasks).
    run: Callable[[], RunContext | None] = lambda: None
    mcp_session: Any = None  # the ClientSession instrumented


def _call_tool(original: Callable[..., Awaitable[Any]], state: State) -> Callable[..., Awaitable[Any]]:
    session = state.mcp_session

    @functools.wraps(original)
    async def call_tool(name: str, arguments: Any = None, *args: Any, **kwargs: Any) -> Any:
        engine = state.engine()
        if not engine.live:
            return await original(name, arguments, *args, **kwargs)
        switches = engine.redaction_switches
        info = session.server_info
        call = ToolCall(
            original,
            session.validate_tool_result,
            name,
            arguments,
            args,
            kwargs,
            hidden=switches.hide_tool_results or switches.hide_outputs,
        )
        return await call_tool_node(engine, call, info.name if info is not None else None, state.run())

    return call_tool


HOOKS: tuple[Hook[State], ...] = (
    Hook(
        "",
        "call_tool",
        _call_tool,
        "mcp>=2.2,<3",
        # mcp/client/session.py ClientSession.call_tool (mcp 2.3.0, line 1052): every tools/call of a
        # session goes through it (the high-level `mcp.client.Client.call_tool` delegates to the session's).
        # It sends the request, then validates a non-error result against the tool's outputSchema
        # (`validate_tool_result`, line 1118, public), which the inject path reuses.
        "mcp/client/session.py:1052 ClientSession.call_tool; :1118 ClientSession.validate_tool_result",
    ),
)


def apply(session: Any, state: State) -> State:
    state.mcp_session = session
    state.apply(session, HOOKS, state)
    return state
