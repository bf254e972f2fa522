"""A framework's sync entry points driven from an async test, as an app calls them from plain sync
code: the kit (graphmind.testing.gate_matrix) runs in an event loop, and frameworks whose sync API
refuses a thread with a running loop (pydantic-ai's `run_sync`, CrewAI's `kickoff`, Strands' sync
call inside its own loop) need a thread of their own.

- `sync_call(fn)`: `fn()` on a new thread (the caller's context copied: its run), its result or its
  exception;
- `in_a_thread(make)`: a sync iterator made and read on a worker thread, its items handed over one
  at a time; closing the generator closes the iterator in its thread.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["in_a_thread", "sync_call"]


def sync_call(fn: Callable[[], Any], timeout: float | None = 60.0) -> Any:
    """`fn()` on a thread without an event loop: its result, or its exception raised here.
    `timeout=None` waits as long as `fn` takes."""
    out: list[Any] = []
    failed: list[BaseException] = []

    def target() -> None:
        try:
            out.append(fn())
        except BaseException as exc:
            failed.append(exc)

    context = contextvars.copy_context()  # the caller's run, as when the app's own thread calls it
    thread = threading.Thread(target=context.run, args=(target,), daemon=True)
    thread.start()
    thread.join(timeout)
    if failed:
        raise failed[0]
    return out[0]


def in_a_thread(make: Callable[[], Any]) -> Iterator[Any]:
    """Items of the sync iterator `make()` returns, made and read in a worker thread and handed over
    one at a time (the next is read only once this one was taken). Closing this generator closes
    the iterator in its thread."""
    items: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
    more = threading.Event()
    stop = threading.Event()

    def reader() -> None:
        try:
            stream = make()
            iterator = iter(stream)
            for item in iterator:
                items.put(("item", item))
                more.wait()
                more.clear()
                if stop.is_set():
                    close = getattr(iterator, "close", None)
                    if close is not None:
                        close()
                    break
            items.put(("end", None))
        except BaseException as exc:
            items.put(("error", exc))

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        while True:
            kind, value = items.get(timeout=30)
            if kind == "end":
                return
            if kind == "error":
                raise value
            try:
                yield value
            except GeneratorExit:
                stop.set()
                more.set()
                raise
            more.set()
    finally:
        stop.set()
        more.set()
        thread.join(30)
