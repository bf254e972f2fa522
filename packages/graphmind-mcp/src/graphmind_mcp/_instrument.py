"""Instrument / uninstrument one `ClientSession` (shared by `instrument_mcp` and the proxy)."""

from __future__ import annotations

from typing import Any, TypeVar

from graphmind.adapter import hook_moved, instrument_once, uninstrument_once

from . import _hooks
from ._version import SUPPORTED, __version__

S = TypeVar("S")


def instrument(session: S, state: _hooks.State) -> S:
    from mcp import ClientSession

    if not isinstance(session, ClientSession):
        raise TypeError(f"instrument_mcp() takes an mcp.ClientSession, got {type(session).__name__}")
    return instrument_once(session, _hooks.MARK, state.session, lambda s: _hooks.apply(s, state), _HOOK_MOVED)


_HOOK_MOVED = hook_moved("mcp", "graphmind-mcp", __version__, SUPPORTED, what="session")


def uninstrument(session: Any) -> Any:
    return uninstrument_once(session, _hooks.MARK)
