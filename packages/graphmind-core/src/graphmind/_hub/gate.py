"""A held gate: one waiter (a thread, an asyncio task or a trio task) and the first answer that reaches it.

Sync code waits on a `threading.Event`. Async code never blocks its event loop: under asyncio it
awaits a future resolved with `loop.call_soon_threadsafe`; under trio (which the OpenAI and
Anthropic SDKs support through anyio) it awaits a `trio.Event` set through the run's token
(`trio.lowlevel.TrioToken.run_sync_soon`, safe from any thread). Which library runs is looked up
only when a gate actually holds (`async_waiter`), so the path that does not hold costs nothing.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._base import forksafe
from .._base.aio import running_loop
from ..protocol import CONTINUE

if TYPE_CHECKING:  # annotations only: a sync app never imports asyncio (_base/aio.py)
    import asyncio


@dataclass(frozen=True)
class GateAnswer:
    action: str
    value: Any = None
    by: str = "hub"
    raw: Any = None  # with inject: the JSON value as the debugger sent it (value is converted)
    # An edit (docs/protocol.md, "Editing a held call"): `has_input` says `input` came with the
    # answer (null is an input too); `reload`: re-import a gated callable's code first.
    input: Any = None
    has_input: bool = False
    reload: bool = False
    # Set by the engine once it decided an edit or reload: the body to run from now on.
    body: Any = None
    # What the one decision (_node/decide.py) made of the answer: return `value` instead of the
    # body's result, or run the body again. Neither: go on. Nothing else sets them.
    injects: bool = False
    retries: bool = False
    # Who answered, as the hub says (`gate.resolve.answeredBy`: viewer, api, mcp), and, with simulate,
    # "simulate like this from now on" (`remember`; docs/protocol.md, "Effects and safe mode").
    answered_by: str | None = None
    remember: bool = False


def _is_asyncio_loop(waiter: Any) -> bool:
    aio = sys.modules.get("asyncio")  # no asyncio loop exists before asyncio is imported
    return aio is not None and isinstance(waiter, aio.AbstractEventLoop)


def async_waiter() -> asyncio.AbstractEventLoop | Any:
    """The running async library's handle for waking a task from another thread: the asyncio loop,
    or the trio run's token. Raises RuntimeError under anything else."""
    loop = running_loop()
    if loop is not None:
        return loop
    trio = sys.modules.get("trio")
    if trio is None:
        raise RuntimeError("graphmind: an async gate holds only under asyncio or trio")
    return trio.lowlevel.current_trio_token()


class HeldGate:
    __slots__ = (
        "_answer",
        "_event",
        "_future",
        "_lock",
        "_loop",
        "_trio_event",
        "_trio_token",
        "gate",
        "gate_id",
        "reason",
        "run_id",
    )

    def __init__(self, gate_id: str, run_id: str, gate: str, waiter: Any = None, reason: str = "") -> None:
        """`waiter`: None for a thread, else what `async_waiter()` returned in the waiting task;
        `reason`: why it holds (`exec.paused.reason`), which decides what some answers mean."""
        self.gate_id = gate_id
        self.run_id = run_id
        self.gate = gate
        self.reason = reason
        self._lock = forksafe.lock()
        self._answer: GateAnswer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._future: asyncio.Future[GateAnswer] | None = None
        self._trio_token: Any = None
        self._trio_event: Any = None
        self._event: threading.Event | None = None
        if waiter is None:
            self._event = forksafe.event()
        elif _is_asyncio_loop(waiter):
            self._loop = waiter
            self._future = waiter.create_future()
        else:  # a trio token: this runs in the trio task that will wait
            self._trio_token = waiter
            self._trio_event = sys.modules["trio"].Event()

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
        elif self._trio_token is not None:
            with contextlib.suppress(Exception):  # trio.RunFinishedError: nobody is waiting any more
                self._trio_token.run_sync_soon(self._trio_event.set)
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
        if self._trio_event is not None:
            return await self._wait_trio(timeout)
        assert self._future is not None
        import asyncio  # imported already: a future of it is awaited

        try:
            return await asyncio.wait_for(asyncio.shield(self._future), timeout)
        except asyncio.TimeoutError:
            self.resolve(GateAnswer(CONTINUE, by="timeout"))
            assert self._answer is not None
            return self._answer

    async def _wait_trio(self, timeout: float | None) -> GateAnswer:
        trio = sys.modules["trio"]
        with trio.move_on_after(timeout if timeout is not None else float("inf")):
            await self._trio_event.wait()
        self.resolve(GateAnswer(CONTINUE, by="timeout"))  # a no-op when an answer came first
        assert self._answer is not None
        return self._answer
