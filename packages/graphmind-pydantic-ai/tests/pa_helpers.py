"""The agents the tests run: a scripted FunctionModel, and tools that count their calls."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent

from graphmind_pydantic_ai.testing import ScriptedModel, call, last_tool_return

__all__ = [
    "ProviderError",
    "ScriptedModel",
    "Search",
    "call",
    "in_a_thread",
    "last_tool_return",
    "search_then_answer",
    "sync_call",
    "tool_agent",
]


class ProviderError(Exception):
    """What a failing model or tool raises (the framework retries neither by itself)."""


@dataclass
class Search:
    """The `search` tool's body: counts calls, records arguments, fails once when told."""

    calls: int = 0
    seen: list[str] = field(default_factory=list)
    fail: BaseException | None = None

    def run(self, q: str) -> str:
        self.calls += 1
        self.seen.append(q)
        if self.fail is not None:
            error, self.fail = self.fail, None
            raise error
        return f"results for {q}"


def search_then_answer(messages: list[Any]) -> Any:
    """The scripted model's turn: ask for `search(q="cats")` until a tool result is in the
    history, then answer with it (so concurrent runs of one agent each call the tool once)."""
    seen = last_tool_return(messages)
    return call("search", q="cats") if seen is None else f"saw: {seen}"


def tool_agent(search: Search, model: ScriptedModel, name: str = "researcher") -> Agent[None, str]:
    """An agent whose model calls `search(q="cats")` and then answers with what the tool returned."""
    agent: Agent[None, str] = Agent(model.model, name=name)

    @agent.tool_plain(name="search")
    def search_tool(q: str) -> str:
        """Search the web."""
        return search.run(q)

    return agent


def sync_call(fn: Any) -> Any:
    """`fn()` on a thread without an event loop, its result or its exception: `run_sync` refuses a
    thread whose loop runs (the kit calls the sync path from its async test), as an app calls it
    from plain sync code."""
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
    thread.join(60)
    if failed:
        raise failed[0]
    return out[0]


def in_a_thread(make: Any) -> Iterator[Any]:
    """Items of a sync iterator made and read in a worker thread, handed over one at a time:
    `run_stream_sync` refuses a thread whose event loop runs (the kit's own), as an app would
    call it from a thread without one. Closing this generator closes the stream in its thread."""
    import queue

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
