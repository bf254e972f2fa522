"""What every node of one client shares (`NodeHost`): the event path, the clock, the hub, the flusher."""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only
    from .._base.clock import Clock
    from .._base.warn import Warner
    from .._events.redaction import RedactionSwitches
    from .._hub.control import HubControl
    from .._runs.tool_call_ids import ToolCallIds
    from .hold_timeout import HoldTimeouts
    from .token_flusher import TokenFlusher


@dataclasses.dataclass(eq=False, slots=True)
class NodeHost:
    """What every node of one client shares: the event path, the clock, the hub, the token flusher.
    `emit(event, trusted, owned)` is `Client._emit`: it numbers, redacts and buffers an event.
    `live`: enabled and not disposed (the client clears it in `dispose`), read as a field by the
    engine and every node: one flag, no call."""

    emit: Callable[..., int]
    clock: Clock
    warn: Warner
    hub: HubControl
    flusher: TokenFlusher
    current_node: contextvars.ContextVar[str | None]
    new_instance_id: Callable[[], str]
    live: bool
    token_flush_ms: float
    pause_timeout: float | None
    tool_calls: ToolCallIds
    hold_timeouts: HoldTimeouts
    replay: Any = None  # a _replay.replayer.Replayer, asked first at every before gate (docs/replay.md)
    # Whether an input can be edited, an output prefill the inject box (_node/edit.py).
    redaction: RedactionSwitches | None = None
    last_outputs: dict[str, Any] = dataclasses.field(default_factory=dict)
    # The event pipeline's `process` (hide switches and mask): text the engine writes about a value,
    # not in a payload field (a replay divergence's diff), is built from what it returns.
    scrub: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
    # Effect classes and safe mode (_effects/policy.py `Effects`; docs/effects.md); None: tools unclassed.
    effects: Any = None
