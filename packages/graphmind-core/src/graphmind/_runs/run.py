"""A run: one `agent:<name>` node, one abort flag, the scope that groups model steps."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._base import forksafe
from .._base.ids import random_hex
from .steps import StepTracker

if TYPE_CHECKING:  # annotations only: a sync app never imports asyncio (_base/aio.py)
    import asyncio


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@dataclass(eq=False)
class RunContext:
    """What `client.run(...)` yields. It works the same whether GraphMind is enabled or not.

    The seeds' abort signal: besides `RunAborted` at the run's next gate, an abort reaches work in
    flight through `abort_event` (a `threading.Event`, for a thread to `wait()` on or poll) and
    `await ctx.wait_aborted()` (for a task to race against its work), so an app can stop a long tool.
    """

    name: str
    run_id: str = field(default_factory=random_hex)
    meta: dict[str, Any] = field(default_factory=dict)
    implicit: bool = False
    started_ms: float = 0.0
    # The conversation or session this run is one turn of (_runs/thread.py), None for none.
    thread: str | None = None
    # A plain flag: written once (False -> True) by whichever thread aborts, read on every gate
    # (the engine's fast path reads it without a lock).
    _aborted: bool = field(default=False, repr=False)
    steps: StepTracker = field(default_factory=StepTracker, repr=False)
    # The first agent a node of this run reported (agents.py): its model steps keep `llm:step`.
    root_agent: str | None = field(default=None, repr=False)
    # Model steps of each other agent, grouped into invocations of their own (steps.py).
    agent_steps: dict[str, StepTracker] = field(default_factory=dict, repr=False)
    _abort_event: threading.Event = field(default_factory=forksafe.event, repr=False)
    _abort_lock: threading.Lock = field(default_factory=forksafe.lock, repr=False)
    _abort_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = field(
        default_factory=list, repr=False
    )

    @property
    def aborted(self) -> bool:
        """True once the run was aborted from the debugger: your loop can check it and stop early."""
        return self._aborted

    @property
    def abort_event(self) -> threading.Event:
        """Set when the run is aborted: `ctx.abort_event.wait(timeout)` in a thread, or `.is_set()`."""
        return self._abort_event

    async def wait_aborted(self) -> None:
        """Returns when the run is aborted (at once if it already was), on whichever loop awaits it.

        Race it against your work: `asyncio.wait({work, asyncio.ensure_future(ctx.wait_aborted())},
        return_when=FIRST_COMPLETED)`. Cancelling the wait is fine.
        """
        if self._aborted:
            return
        import asyncio  # imported already: this coroutine runs on its loop

        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        entry = (loop, future)
        with self._abort_lock:
            if self._aborted:
                return
            self._abort_waiters.append(entry)
        try:
            await future
        finally:
            with self._abort_lock, contextlib.suppress(ValueError):
                self._abort_waiters.remove(entry)

    @property
    def node_id(self) -> str:
        return f"agent:{self.name}"

    def mark_aborted(self) -> None:
        """Called from any thread (the hub's control thread, or the thread whose gate got `abort`)."""
        with self._abort_lock:
            self._aborted = True
            waiters, self._abort_waiters = self._abort_waiters, []
        self._abort_event.set()
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody is waiting any more
                loop.call_soon_threadsafe(_settle, future)
