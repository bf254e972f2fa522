"""GraphMind for MCP: every tool call a node the debugger can hold, inspect, replace, retry or abort.

In your app (an MCP client):

    from mcp import ClientSession
    from graphmind_mcp import instrument_mcp

    instrument_mcp(session)          # each session.call_tool(...) is a `tool:<name>` node

In front of any MCP server, with no code change (a host such as Claude Desktop or an IDE):

    graphmind mcp-proxy -- uvx mcp-server-time

Nothing global is patched: `instrument_mcp` acts on the session given.
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

import graphmind

from . import _hooks
from ._call import ToolResultError
from ._hooks import instrument, uninstrument
from ._version import SUPPORTED, __version__

__all__ = ["SUPPORTED", "ToolResultError", "__version__", "instrument_mcp", "uninstrument_mcp"]

S = TypeVar("S")
_POSITIONAL: Any = object()  # no positional argument given


@overload
def instrument_mcp(mcp_session: S, /, *, session: graphmind.Client | None = None) -> S: ...
@overload
def instrument_mcp(mcp_session: S, /, *, client: graphmind.Client | None) -> S: ...
@overload
def instrument_mcp(*, session: S, client: graphmind.Client | None = None) -> S: ...
def instrument_mcp(
    mcp_session: Any = _POSITIONAL, /, *, session: Any = None, client: graphmind.Client | None = None
) -> Any:
    """Instruments an `mcp.ClientSession`, or an `mcp.client.Client`, in place and returns it.

    A `Client`'s `call_tool` is the app-level call: a multi-round call (the SDK re-sending
    `tools/call` once per `InputRequiredResult` round) is one node with its rounds in it.

    `session=`: the GraphMind client to report to (default: `graphmind.get_client()` at each call),
    as in every adapter; `client=` is its earlier name here and still works. With no positional
    argument, `session=` is the MCP session and `client=` the GraphMind client, as before
    (`instrument_mcp(session=s, client=gm)`). A second call is harmless; `uninstrument_mcp(session)`
    undoes it. Disabled (`GRAPHMIND_DISABLED=1` or a disabled client): nothing is patched and the
    very session is returned.
    """
    if mcp_session is _POSITIONAL:  # the earlier keyword call: the MCP session named `session`
        mcp_session, gm = session, client
    elif session is not None and client is not None:
        raise TypeError(
            "instrument_mcp() takes the GraphMind client once: session= (or its earlier name, client=)"
        )
    else:
        gm = session if session is not None else client
    return instrument(mcp_session, _hooks.State(gm))


def uninstrument_mcp(session: Any) -> Any:
    """Undoes `instrument_mcp(session)`; a session that is not instrumented is returned unchanged."""
    return uninstrument(session)
