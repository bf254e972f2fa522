"""Tool node identity = the tool call id (the AI SDK page's node identity table), without the app
writing `with gm.tool_call(call.id)`.

A model step that asks for tools reports its calls here (the adapter marks its `llm:step` with
`NodeSpec(tool_calls_in_output=True)`, or calls `Engine.expect_tool_calls`); the gated tool nodes
started after it under the same parent (the node or run the step ran under) take those ids by
name, in the model's order: the first `tool:search` after a step
that asked for search twice takes the first id, the next one the second. The queue is per run (per
context outside any run); each model step's report replaces the previous one, so an entry no tool
took by the end of the next model step is dropped. An explicit id (`gm.tool_call`, a framework's
own id) wins and removes its entry. docs/protocol.md, "Tool node identity".
"""

from __future__ import annotations

import contextvars
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from .._base import forksafe
from .._node.spec import NodeSpec
from .run import RunContext


class PendingToolCalls:
    """The calls model steps asked for that no tool node has taken yet: (name, id), in order, per
    parent (the node or run the step ran under). A tool takes from its own parent's steps only, so a
    sub-agent running inside a tool (its steps are that tool's children) and the outer agent do
    not take or drop each other's ids."""

    __slots__ = ("_calls", "_lock")

    def __init__(self) -> None:
        self._lock = forksafe.lock()
        self._calls: dict[str, list[tuple[str, str]]] = {}

    def replace(self, parent: str, calls: list[tuple[str, str]]) -> None:
        with self._lock:
            if calls:
                self._calls[parent] = calls
            else:
                self._calls.pop(parent, None)

    def take(self, parent: str, name: str) -> str | None:
        """The id of the first waiting call of the tool `name` under `parent` (removed), or None."""
        with self._lock:
            calls = self._calls.get(parent)
            if calls:
                for i, (call_name, call_id) in enumerate(calls):
                    if call_name == name:
                        del calls[i]
                        return call_id
        return None

    def discard(self, parent: str, call_id: str) -> None:
        """A tool node took this id explicitly: it is no longer waiting."""
        with self._lock:
            calls = self._calls.get(parent)
            if calls:
                self._calls[parent] = [c for c in calls if c[1] != call_id]

    def __len__(self) -> int:
        return sum(len(calls) for calls in self._calls.values())


def calls_of(reply: Any) -> list[tuple[str, str]]:
    """(name, id) of each tool call in a model reply described the adapters' way
    (`{"tool_calls": [{"id": ..., "name": ..., ...}]}`); calls without a string id or name are skipped."""
    # `type(...) is dict` first: an ABC isinstance check costs about as much as the rest (every
    # model step that reports its calls ends here).
    calls = reply.get("tool_calls") if type(reply) is dict or isinstance(reply, Mapping) else None
    return calls_from(calls) if isinstance(calls, list) and calls else []


def calls_from(calls: Iterable[Any]) -> list[tuple[str, str]]:
    """(name, id) pairs from `{"name", "id"}` mappings or `(name, id)` pairs; anything else is skipped."""
    out: list[tuple[str, str]] = []
    for call in calls:
        if type(call) is dict or isinstance(call, Mapping):
            name, call_id = call.get("name"), call.get("id")
        elif isinstance(call, tuple) and len(call) == 2:
            name, call_id = call
        else:
            continue
        if isinstance(name, str) and isinstance(call_id, str) and name and call_id:
            out.append((name, call_id))
    return out


class ToolCallIds:
    """Every run's pending tool calls for one client. Thread-safe; never raises into a call."""

    def __init__(self, key: str) -> None:
        self._lock = forksafe.lock()
        self._runs: weakref.WeakKeyDictionary[RunContext, PendingToolCalls] = weakref.WeakKeyDictionary()
        # Outside any run the queue follows the calling context: a thread, or an asyncio / trio task
        # and the tasks it starts (they copy the context, so they share the same queue object).
        self._implicit: contextvars.ContextVar[PendingToolCalls | None] = contextvars.ContextVar(
            f"graphmind_pending_tool_calls_{key}", default=None
        )
        self.used = False  # nothing was ever reported: tool nodes skip the lookup (Engine.start_node)

    def _queue(self, run: RunContext, create: bool) -> PendingToolCalls | None:
        if run.implicit:
            pending = self._implicit.get()
            if pending is None and create:
                pending = PendingToolCalls()
                self._implicit.set(pending)
            return pending
        with self._lock:
            pending = self._runs.get(run)
            if pending is None and create:
                pending = self._runs[run] = PendingToolCalls()
            return pending

    def expect(self, run: RunContext, parent: str, calls: list[tuple[str, str]]) -> None:
        """A model step of `run`, under `parent`, ended asking for `calls` (possibly none): they
        replace what the previous step under that parent asked for and no tool took."""
        pending = self._queue(run, create=bool(calls))
        if pending is not None:
            self.used = True
            pending.replace(parent, calls)

    def assign(self, run: RunContext, parent: str, spec: NodeSpec) -> None:
        """Gives a tool node without an id the next waiting call id of its tool; a node that has an
        id (explicit) removes that id from the queue instead."""
        if not self.used:
            return
        pending = self._queue(run, create=False)
        if pending is None or not len(pending):
            return
        if spec.instance_id is not None:
            pending.discard(parent, spec.instance_id)
        else:
            spec.instance_id = pending.take(parent, spec.name)
