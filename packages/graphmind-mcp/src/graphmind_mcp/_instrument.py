"""Instrument / uninstrument one `ClientSession` or `mcp.client.Client` (shared by `instrument_mcp` and the proxy)."""

from __future__ import annotations

from typing import Any, TypeVar

from graphmind.adapter import hook_moved, instrument_once, uninstrument_once

from . import _hooks
from ._version import SUPPORTED, __version__

S = TypeVar("S")


def instrument(session: S, state: _hooks.State) -> S:
    from mcp import ClientSession
    from mcp.client import Client

    if isinstance(session, Client):
        hooks = _hooks.CLIENT_HOOKS  # the app-level call: a multi-round call is one node (_rounds.py)
    elif isinstance(session, ClientSession):
        hooks = _hooks.HOOKS
    else:
        raise TypeError(
            f"instrument_mcp() takes an mcp.ClientSession or an mcp.client.Client, got {type(session).__name__}"
        )
    return instrument_once(
        session, _hooks.MARK, state.session, lambda s: _hooks.apply(s, state, hooks), _HOOK_MOVED
    )


_HOOK_MOVED = hook_moved("mcp", "graphmind-mcp", __version__, SUPPORTED, what="session")


def uninstrument(session: Any) -> Any:
    return uninstrument_once(session, _hooks.MARK, _hooks.undo)
