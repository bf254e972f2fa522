"""A held gate: one waiter (a thread or an asyncio task) and the first answer that reaches it.

Sync code waits on a `threading.Event`; asyncio code awaits a future that is resolved with
`call_soon_threadsafe`, so a hold never blocks an event loop and parallel calls hold independently.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any

from .protocol import CONTINUE


@dataclass(frozen=True)
class GateAnswer:
    action: str
    value: Any = None
    by: str = "hub"
    raw: Any = None  # with inject: the JSON value as the debugger sent it (value is converted)


class HeldGate:
    __slots__ = ("_answer", "_event", "_future", "_lock", "_loop", "gate", "gate_id", "run_id")

    def __init__(self, gate_id: str, run_id: str, gate: str, loop: asyncio.AbstractEventLoop | None) -> None:
        self.gate_id = gate_id
        self.run_id = run_id
        self.gate = gate
        self._lock = threading.Lock()
        self._answer: GateAnswer | None = None
        self._loop = loop
        self._event = threading.Event() if loop is None else None
        self._future: asyncio.Future[GateAnswer] | None = loop.create_future() if loop is not None else None

    @property
    def answered(self) -> bool:
        return self._answer is not None

    def resolve(self, answer: GateAnswer) -> bool:
        """First answer wins; safe from any thread. Returns False when already answered."""
        with self._lock:
            if self._answer is not None:
                return False
            self._answer = answer
        if self._event is not None:
            self._event.set()
        elif self._loop is not None:
            try:
                self._loop.call_soon_threadsafe(self._settle_future, answer)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass
        return True

    def _settle_future(self, answer: GateAnswer) -> None:
        if self._future is not None and not self._future.done():
            self._future.set_result(answer)

    def wait(self, timeout: float | None) -> GateAnswer:
        assert self._event is not None
        if not self._event.wait(timeout):
            self.resolve(GateAnswer(CONTINUE, by="timeout"))
        assert self._answer is not None
        return self._answer

    async def wait_async(self, timeout: float | None) -> GateAnswer:
        assert self._future is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._future), timeout)
        except asyncio.TimeoutError:
            self.resolve(GateAnswer(CONTINUE, by="timeout"))
            assert self._answer is not None
            return self._answer
