"""The hook points, as one table per hooked type that drives both instrument and uninstrument (both here).

Each hook is a `graphmind.adapter.Hook` row, an attribute set on the `ClientSession` (or
`mcp.client.Client`) instance given (it shadows the class's method), so nothing global changes and
another session in the process is untouched; uninstrument (the row's `Patches`) deletes the
attribute (or puts back what the instance held before) and the class's own method shows through
again. A version change of the SDK is one row here. `tests/test_hooks_upstream.py` fails loudly
when a hooked method moves.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from graphmind.adapter import Hook, Patches, RunContext, hook_moved, instrument_once, uninstrument_once

from ._call import ToolCall, call_tool_node
from ._effects import effect_of
from ._rounds import CURRENT, Rounds, is_continuation
from ._version import SUPPORTED, __version__

MARK = "_graphmind_mcp"
S = TypeVar("S")


@dataclass(eq=False)
class State(Patches):
    """What instrument_mcp did to one session (a `graphmind.adapter.Patches`: undo undoes exactly that)."""

    # The run each call belongs to; None: the calling context's (`gm.run(...)` or the implicit run).
    # graphmind mcp-proxy passes its host session's run (its handlers run in the SDK's own tasks).
    run: Callable[[], RunContext | None] = lambda: None
    mcp_session: Any = None  # the ClientSession (or mcp.client.Client) instrumented
    # A `Client`'s state: the sessions this client instrumented for its rounds (undone with it).
    sessions: list[Any] = field(default_factory=list)
    # The loop streak of calls made outside any GraphMind run is this session's (or client's):
    # identical calls through separate MCP sessions (separate connections, e.g. one per test of a
    # suite, or per request of a server) are not one agent repeating itself.
    line: object = field(default_factory=object)
    # Each tool's annotations as this session's tools/list answers gave them: its effect class
    # (_effects.py; docs/effects.md). A tool not listed yet is classed by core's name rule.
    annotations: dict[str, Any] = field(default_factory=dict)


def _call_tool(original: Callable[..., Awaitable[Any]], state: State) -> Callable[..., Awaitable[Any]]:
    session = state.mcp_session

    @functools.wraps(original)
    async def call_tool(name: str, arguments: Any = None, *args: Any, **kwargs: Any) -> Any:
        rounds = CURRENT.get()
        if rounds is not None and rounds.owns(name):
            # One round of an instrumented `Client.call_tool` (_rounds.py): that call is the node.
            try:
                result = await original(name, arguments, *args, **kwargs)
            except Exception as exc:
                rounds.failed(exc)
                raise
            rounds.record(result)
            return result
        engine = state.engine()
        if not engine.live or is_continuation(kwargs):
            # A re-send of a call answered `InputRequiredResult`: part of the call its first round
            # started (a node already), not another call: no node, no loop streak (_rounds.py).
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
        call.output_schema = output_schema(session, name)
        call.effect = effect_of(state.annotations.get(name))
        return await call_tool_node(
            engine, call, info.name if info is not None else None, state.run(), line=state.line
        )

    return call_tool


def output_schema(session: Any, name: str) -> Any:
    """The tool's outputSchema as the session read it from tools/list (mcp/client/session.py:440, the
    cache its own validate_tool_result reads): the inject box's skeleton of a structured result."""
    schemas = getattr(session, "_tool_output_schemas", None)
    return schemas.get(name) if isinstance(schemas, dict) else None


def _client_call_tool(original: Callable[..., Awaitable[Any]], state: State) -> Callable[..., Awaitable[Any]]:
    """`mcp.client.Client.call_tool`, the app-level call: one node for all its rounds."""
    client = state.mcp_session

    @functools.wraps(original)
    async def call_tool(name: str, arguments: Any = None, *args: Any, **kwargs: Any) -> Any:
        engine = state.engine()
        session = vars(client).get("_session")  # None: not entered; the SDK raises its own error
        if not engine.live or session is None:
            return await original(name, arguments, *args, **kwargs)
        if Patches.of(session, MARK) is None:  # the session's hook is what sees each round
            instrument(session, State(state.session, state.run))
            state.sessions.append(session)
        rounds = Rounds(name)

        async def all_rounds(*call: Any, **options: Any) -> Any:
            token = CURRENT.set(rounds)
            try:
                return await original(*call, **options)
            finally:
                CURRENT.reset(token)

        switches = engine.redaction_switches
        info = session.server_info
        call = ToolCall(
            all_rounds,
            session.validate_tool_result,
            name,
            arguments,
            args,
            kwargs,
            hidden=switches.hide_tool_results or switches.hide_outputs,
        )
        call.output_schema = output_schema(session, name)
        return await call_tool_node(
            engine, call, info.name if info is not None else None, state.run(), rounds=rounds, line=state.line
        )

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


def _list_tools(original: Callable[..., Awaitable[Any]], state: State) -> Callable[..., Awaitable[Any]]:
    """`ClientSession.list_tools`: keeps each listed tool's annotations (its effect class)."""

    @functools.wraps(original)
    async def list_tools(*args: Any, **kwargs: Any) -> Any:
        result = await original(*args, **kwargs)
        for tool in getattr(result, "tools", None) or ():
            name = getattr(tool, "name", None)
            if isinstance(name, str):
                state.annotations[name] = getattr(tool, "annotations", None)
        return result

    return list_tools


# The listing a session's calls are classed by (docs/effects.md): not a call, so a table of its own.
LIST_HOOKS: tuple[Hook[State], ...] = (
    Hook(
        "",
        "list_tools",
        _list_tools,
        "mcp>=2.2,<3",
        # mcp/client/session.py ClientSession.list_tools (mcp 2.3.0, line 1278): returns the
        # ListToolsResult whose Tool objects carry `annotations` (readOnlyHint, destructiveHint).
        "mcp/client/session.py:1278 ClientSession.list_tools",
    ),
)

CLIENT_HOOKS: tuple[Hook[State], ...] = (
    Hook(
        "",
        "call_tool",
        _client_call_tool,
        "mcp>=2.3,<3",
        # mcp/client/client.py Client.call_tool (mcp 2.3.0, line 756): the app-level call. It sends
        # the first round, then `_drive_input_required` (line 910) re-sends through the session
        # (line 811) once per InputRequiredResult round (mcp/client/_input_required.py:95).
        "mcp/client/client.py:756 Client.call_tool",
    ),
)


def apply(session: Any, state: State, hooks: tuple[Hook[State], ...] = HOOKS) -> State:
    state.mcp_session = session
    state.apply(session, hooks, state)
    return state


def undo(state: Any) -> None:
    """The state's patches, then the sessions a Client's calls instrumented for their rounds."""
    Patches.undo(state)
    while isinstance(state, State) and state.sessions:
        uninstrument(state.sessions.pop())


def instrument(session: S, state: State) -> S:
    """Instruments one `ClientSession` or `mcp.client.Client` (shared by `instrument_mcp` and the proxy)."""
    from mcp import ClientSession
    from mcp.client import Client

    if isinstance(session, Client):
        hooks = CLIENT_HOOKS  # the app-level call: a multi-round call is one node (_rounds.py)
    elif isinstance(session, ClientSession):
        hooks = HOOKS + LIST_HOOKS
    else:
        raise TypeError(
            f"instrument_mcp() takes an mcp.ClientSession or an mcp.client.Client, got {type(session).__name__}"
        )
    return instrument_once(session, MARK, state.session, lambda s: apply(s, state, hooks), _HOOK_MOVED)


_HOOK_MOVED = hook_moved("mcp", "graphmind-mcp", __version__, SUPPORTED, what="session")


def uninstrument(session: Any) -> Any:
    return uninstrument_once(session, MARK, undo)
