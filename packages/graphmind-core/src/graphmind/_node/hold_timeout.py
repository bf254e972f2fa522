"""A timeout that keeps running while a gate holds (docs/timeouts.md; the AI SDK page's "timeout
neutralization ... warning once"): when a hold outlives a timeout the adapter knows of, say so once
per node id, while the gate is still held.

Only the adapter can know such a timeout (a LlamaIndex workflow's `timeout`): it passes it on the
node (`NodeSpec(hold_timeout=KnownTimeout(...))`) and core does the rest. A hold is rare and human
length, so one daemon timer per hold that has a known timeout costs nothing that matters.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .._base import forksafe

MAX_WARNED_NODES = 4096
STOP_WAIT_S = 1.0  # longest a closing gate waits for a warning already being written


@dataclass(frozen=True)
class KnownTimeout:
    """`seconds`: how long the timeout lasts; `what`: what it is, as the warning names it ("the
    workflow's timeout"); `advice`: how to lift it while debugging ("pass timeout=None");
    `started`: when it began (`time.monotonic()`), for a timeout that spans more than the call (a
    workflow's, from the run's start); None: it starts with the hold."""

    seconds: float
    what: str
    advice: str = "remove it while debugging"
    started: float | None = None


def hold_timeout_warning(node_id: str, gate: str, timeout: KnownTimeout) -> str:
    return (
        f"[graphmind] the {gate} gate of {node_id} has been held longer than {timeout.what} "
        f"({timeout.seconds:g} s), which keeps running while a gate is held: the call may time out "
        f"when it resumes. Prefer removing the timeout while debugging ({timeout.advice})."
    )


class HoldWatch:
    """One hold's timer, firing at the timeout's deadline; `stop` it when the gate closes."""

    __slots__ = ("_fire", "_timer", "deadline")

    def __init__(self, deadline: float, fire: Callable[[], None]) -> None:
        self.deadline = deadline
        self._fire = fire
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), fire)
        self._timer.daemon = True
        self._timer.name = "graphmind-hold-timeout"
        self._timer.start()

    def stop(self) -> None:
        self._timer.cancel()
        # A timer already firing is not stopped by cancel: wait for its warning so the warning is
        # out by the time the gate has closed (bounded: a hold is rare, a logger call short).
        self._timer.join(STOP_WAIT_S)
        # The timer lost the race with the gate's end (an answer, or the timeout itself cancelling
        # the held task at its deadline): warn all the same.
        if time.monotonic() >= self.deadline:
            self._fire()


class HoldTimeouts:
    """Warns once per node id when a hold outlives the node's known timeout. Never raises."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self._warn = warn
        self._lock = forksafe.lock()
        self._warned: set[str] = set()

    def watch(self, node_id: str, gate: str, timeout: KnownTimeout | None) -> HoldWatch | None:
        if timeout is None or not timeout.seconds > 0:
            return None
        with self._lock:
            if node_id in self._warned:
                return None
        start = time.monotonic() if timeout.started is None else timeout.started
        return HoldWatch(start + timeout.seconds, lambda: self._once(node_id, gate, timeout))

    def _once(self, node_id: str, gate: str, timeout: KnownTimeout) -> None:
        with self._lock:
            if node_id in self._warned:
                return
            if len(self._warned) >= MAX_WARNED_NODES:
                self._warned.clear()
            self._warned.add(node_id)
        try:
            self._warn(hold_timeout_warning(node_id, gate, timeout))
        except Exception:  # a broken logger must not break the app
            pass
