"""What every node of one client shares (`NodeHost`), apart from the node itself (`_execution.py`)."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .._base.clock import Clock
from .._base.warn import Warner
from .._hub.control import HubControl
from .._runs.tool_call_ids import ToolCallIds
from .hold_timeout import HoldTimeouts
from .token_flusher import TokenFlusher

__all__ = ["Emit", "NodeHost"]


class Emit(Protocol):
    """`Client._emit`: (event, built by the engine, its payload owned by the adapter) -> its seq."""

    def __call__(self, event: dict[str, Any], trusted: bool = ..., owned: bool = ..., /) -> int: ...


@dataclass(eq=False, slots=True)
class NodeHost:
    """What every node of one client shares: the event path, the clock, the hub, the token flusher."""

    emit: Emit
    clock: Clock
    warn: Warner
    hub: HubControl
    flusher: TokenFlusher
    current_node: contextvars.ContextVar[str | None]
    new_instance_id: Callable[[], str]
    live: Callable[[], bool]
    token_flush_ms: float
    pause_timeout: float | None
    tool_calls: ToolCallIds
    hold_timeouts: HoldTimeouts
