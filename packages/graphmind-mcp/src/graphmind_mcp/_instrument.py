"""Instrument / uninstrument one `ClientSession` (shared by `instrument_mcp` and the proxy)."""

from __future__ import annotations

from importlib import metadata
from typing import Any, TypeVar

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
    if _hooks.MARK in vars(session):
        return session
    if not state.engine().enabled:
        return session  # disabled: the session stays exactly as it was (zero overhead)
    try:
        _hooks.apply(session, state, hooks)
    except AttributeError as exc:
        state.engine().warn(
            f"[graphmind] mcp {metadata.version('mcp')} no longer has a hook graphmind-mcp {__version__} uses ({exc}); "
            f"the session runs uninstrumented: install a supported mcp ({SUPPORTED}) or upgrade graphmind-mcp.",
            key="mcp-hooks",
        )
        return session
    vars(session)[_hooks.MARK] = state
    return session


def uninstrument(session: Any) -> Any:
    state = vars(session).pop(_hooks.MARK, None)
    if state is not None:
        _hooks.undo(session, state)
    return session
