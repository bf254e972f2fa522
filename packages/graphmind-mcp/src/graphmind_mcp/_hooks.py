"""The hook points, as one table per hooked type that drives both instrument and uninstrument.

Each hook is an attribute set on the `ClientSession` (or `mcp.client.Client`) instance given (it shadows the class's method),
so nothing global changes and another session in the process is untouched; uninstrument deletes
the attribute (or puts back what the instance held before) and the class's own method shows through again. A version change of the SDK is one
row here. `tests/test_hooks_upstream.py` fails loudly when a hooked method moves.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import graphmind
from graphmind.adapter import Engine, RunContext, engine_for

from ._call import ToolCall, call_tool_node
from ._rounds import CURRENT, Rounds, is_continuation

MARK = "_graphmind_mcp"
_ABSENT = object()


@dataclass
class State:
    """What instrument_mcp did to one session, so uninstrument can undo exactly that."""

    client: graphmind.Client | None
    # The run each call belongs to; None: the calling context's (`gm.run(...)` or the implicit run).
    # graphmind mcp-proxy passes its host session's run (its handlers run in the SDK's own tasks).
    run: Callable[[], RunContext | None] = lambda: None
    # (attribute, what the instance itself held before, or _ABSENT): undo puts back exactly that.
    patched: list[tuple[str, Any]] = field(default_factory=list)
    # A `Client`'s state: the session this client instrumented for its rounds (undone with it).
    sessions: list[Any] = field(default_factory=list)
    # The loop streak of calls made outside any GraphMind run is this session's (or client's):
    # identical calls through separate MCP sessions (separate connections, e.g. one per test of a
    # suite, or per request of a server) are not one agent repeating itself.
    line: object = field(default_factory=object)

    def engine(self) -> Engine:
        # Asked per call when no client was given: graphmind.configure() may replace the default one.
        return engine_for(self.client)


def _call_tool(
    session: Any, original: Callable[..., Awaitable[Any]], state: State
) -> Callable[..., Awaitable[Any]]:
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
        return await call_tool_node(
            engine, call, info.name if info is not None else None, state.run(), line=state.line
        )

    return call_tool


def _client_call_tool(
    client: Any, original: Callable[..., Awaitable[Any]], state: State
) -> Callable[..., Awaitable[Any]]:
    """`mcp.client.Client.call_tool`, the app-level call: one node for all its rounds."""

    @functools.wraps(original)
    async def call_tool(name: str, arguments: Any = None, *args: Any, **kwargs: Any) -> Any:
        engine = state.engine()
        session = vars(client).get("_session")  # None: not entered; the SDK raises its own error
        if not engine.live or session is None:
            return await original(name, arguments, *args, **kwargs)
        if MARK not in vars(session):  # the session's hook is what sees each round
            from ._instrument import instrument

            instrument(session, State(state.client, state.run))
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
        return await call_tool_node(
            engine, call, info.name if info is not None else None, state.run(), rounds=rounds, line=state.line
        )

    return call_tool


@dataclass(frozen=True)
class Hook:
    attribute: str  # the `ClientSession` method replaced on the instance
    wrap: Callable[[Any, Callable[..., Awaitable[Any]], State], Callable[..., Awaitable[Any]]]
    mcp: str  # the mcp versions this row was read in and is tested against
    upstream: str  # where the hook lives upstream, and why it is enough


HOOKS: tuple[Hook, ...] = (
    Hook(
        "call_tool",
        _call_tool,
        ">=2.2,<3",
        # mcp/client/session.py ClientSession.call_tool (mcp 2.3.0, line 1052): every tools/call of a
        # session goes through it (the high-level `mcp.client.Client.call_tool` delegates to the session's).
        # It sends the request, then validates a non-error result against the tool's outputSchema
        # (`validate_tool_result`, line 1118, public), which the inject path reuses.
        "mcp/client/session.py ClientSession.call_tool; ClientSession.validate_tool_result",
    ),
)


CLIENT_HOOKS: tuple[Hook, ...] = (
    Hook(
        "call_tool",
        _client_call_tool,
        ">=2.3,<3",
        # mcp/client/client.py Client.call_tool (mcp 2.3.0, line 756): the app-level call. It sends
        # the first round, then `_drive_input_required` (line 910) re-sends through the session
        # (line 811) once per InputRequiredResult round (mcp/client/_input_required.py:95).
        "mcp/client/client.py Client.call_tool",
    ),
)


def apply(session: Any, state: State, hooks: tuple[Hook, ...] = HOOKS) -> None:
    try:
        for hook in hooks:
            original = getattr(session, hook.attribute)
            state.patched.append((hook.attribute, vars(session).get(hook.attribute, _ABSENT)))
            setattr(session, hook.attribute, hook.wrap(session, original, state))
    except Exception:
        undo(session, state)
        raise


def undo(session: Any, state: State) -> None:
    for attribute, previous in reversed(state.patched):
        if previous is _ABSENT:
            vars(session).pop(attribute, None)  # the class's own method shows through again
        else:
            setattr(session, attribute, previous)
    state.patched.clear()
    while state.sessions:  # the sessions a Client's calls instrumented for their rounds
        from ._instrument import uninstrument

        uninstrument(state.sessions.pop())
