"""GraphMind for MCP: every tool call a node the debugger can hold, inspect, replace, retry or abort.

In your app (an MCP client):

    from mcp import ClientSession
    from graphmind_mcp import instrument_mcp

    instrument_mcp(session)          # each session.call_tool(...) is a `tool:<name>` node
    instrument_mcp(client)           # an mcp.client.Client: each client.call_tool(...) one node,
                                     # its InputRequiredResult rounds included

In front of any MCP server, with no code change (a host such as Claude Desktop or an IDE):

    graphmind mcp-proxy -- uvx mcp-server-time

Nothing global is patched: `instrument_mcp` acts on the session given.
"""

from __future__ import annotations

from typing import Any, TypeVar

import graphmind

from . import _hooks
from ._call import ToolResultError
from ._instrument import instrument, uninstrument
from ._version import SUPPORTED, __version__

__all__ = ["SUPPORTED", "ToolResultError", "__version__", "instrument_mcp", "uninstrument_mcp"]

S = TypeVar("S")


def instrument_mcp(session: S, *, client: graphmind.Client | None = None) -> S:
    """Instruments an `mcp.ClientSession`, or an `mcp.client.Client`, in place and returns it.

    A `Client`'s `call_tool` is the app-level call: a multi-round call (the SDK re-sending
    `tools/call` once per `InputRequiredResult` round) is one node with its rounds in it.

    `client`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    A second call is harmless; `uninstrument_mcp(session)` undoes it. Disabled (`GRAPHMIND_DISABLED=1`
    or a disabled client): nothing is patched and the very session is returned.
    """
    return instrument(session, _hooks.State(client))


def uninstrument_mcp(session: Any) -> Any:
    """Undoes `instrument_mcp(session)`; a session that is not instrumented is returned unchanged."""
    return uninstrument(session)
