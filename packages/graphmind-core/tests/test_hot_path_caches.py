"""What the hot path's shortcuts (issue 17) must not change.

- A task's line of execution is cached in its context: the task keeps its number, a task it starts
  and a worker thread that inherits its context (`asyncio.to_thread`) still get numbers of their own.
- The token flusher wakes only when idle: a batch scheduled while it is awake is still sent within
  the interval, by the same wake-up.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from graphmind._base.warn import Warner
from graphmind._loop.guard import line_of_execution
from graphmind._node.token_flusher import TokenFlusher


async def test_a_task_keeps_its_line_and_the_tasks_and_threads_it_starts_get_their_own() -> None:
    mine = line_of_execution()
    assert line_of_execution() == mine  # the cached number is the task's own

    async def child() -> tuple[int, int]:
        return line_of_execution(), line_of_execution()

    first, again = await asyncio.create_task(child())  # inherits the parent's cached entry
    assert first == again != mine
    other, _ = await asyncio.create_task(child())
    assert other not in (mine, first)
    in_thread = await asyncio.to_thread(line_of_execution)  # runs in a copy of this task's context
    assert in_thread not in (mine, first, other)
    assert line_of_execution() == mine


class _Node:
    def __init__(self, instance_id: str) -> None:
        self.instance_id = instance_id
        self.flushed = threading.Event()

    def flush_tokens(self) -> None:
        self.flushed.set()


def test_a_batch_scheduled_while_the_flusher_is_awake_joins_its_window() -> None:
    stopped = threading.Event()
    flusher = TokenFlusher(200.0, Warner(None), stopped.is_set)
    wakeups: list[int] = []
    original_set = flusher._wakeup.set

    def counted_set() -> None:
        wakeups.append(1)
        original_set()

    flusher._wakeup.set = counted_set  # type: ignore[method-assign]
    first, second = _Node("a"), _Node("b")
    try:
        flusher.schedule(first)  # idle: wakes the thread, which opens a 200 ms window
        flusher.schedule(second)  # awake: joins that window, no second wake-up
        assert first.flushed.wait(5) and second.flushed.wait(5)
        assert len(wakeups) == 1
        third = _Node("c")
        flusher.schedule(third)  # the window has closed: the thread waits for work again, so this wakes it
        assert third.flushed.wait(5)
        assert len(wakeups) == 2
    finally:
        stopped.set()
        flusher._wakeup.set = original_set  # type: ignore[method-assign]
        original_set()
        thread: Any = flusher._thread
        if thread is not None:
            thread.join(5)
            assert not thread.is_alive()
