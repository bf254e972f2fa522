"""Instrument / uninstrument one `ClientSession` (shared by `instrument_mcp` and the proxy)."""

from __future__ import annotations

from importlib import metadata
from typing import Any, TypeVar

from graphmind.adapter import instrument_once, uninstrument_once

from . import _hooks
from ._version import SUPPORTED, __version__

S = TypeVar("S")


def instrument(session: S, state: _hooks.State) -> S:
    from mcp import ClientSession

    if not isinstance(session, ClientSession):
        raise TypeError(f"instrument_mcp() takes an mcp.ClientSession, got {type(session).__name__}")
    return instrument_once(session, _hooks.MARK, state.session, lambda s: _hooks.apply(s, state), _hook_moved)


def _hook_moved(exc: AttributeError) -> tuple[str, str]:
    return (
        f"[graphmind] mcp {metadata.version('mcp')} no longer has a hook graphmind-mcp {__version__} uses ({exc}); "
        f"the session runs uninstrumented: install a supported mcp ({SUPPORTED}) or upgrade graphmind-mcp.",
        "mcp-hooks",
    )


def uninstrument(session: Any) -> Any:
    return uninstrument_once(session, _hooks.MARK)
