"""What the instrumentation handler and the gated methods share, so that one call is one node.

- A gated method (`gate_tools` / `gate_llm`) starts its node itself, then marks the call as
  inside it (`inside`) while the real method runs. The real method is LlamaIndex's, wrapped by the
  dispatcher's span; the handler sees that span's `instance` is the marked object and maps the
  span to the gated node instead of starting a second one.
- The handler, when installed, knows which node every open span belongs to; a gated method asks it
  (`context_of_span`) for its run and parent, from the dispatcher's `active_span_id`.
- Tool call ids: a model step's reply names the tool calls it wants (id, name, arguments); the
  tool node that runs one of them takes its id as instance id (`remember_tool_calls` /
  `take_tool_call_id`), whether the handler or a gate started it.
"""

from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from llama_index_instrumentation.span import active_span_id

from graphmind.adapter import KnownTimeout, NodeExecution, RunContext


@dataclass(eq=False, slots=True)
class Inside:
    """Set while a gated method runs the real call of `obj` (its node is `ex`)."""

    obj: Any
    ex: NodeExecution


inside: contextvars.ContextVar[Inside | None] = contextvars.ContextVar("graphmind_li_inside", default=None)


def is_inside(obj: Any) -> bool:
    state = inside.get()
    return state is not None and state.obj is obj


class SpanContext(Protocol):
    def context_of_span(self, span_id: str | None) -> tuple[RunContext | None, str | None]: ...
    def timeout_of_span(self, span_id: str | None) -> KnownTimeout | None: ...
    def agents_of_span(self, span_id: str | None) -> tuple[str, ...]: ...


_handler: list[SpanContext] = []  # the installed handler, if any (instrument_llamaindex)


def set_handler(handler: SpanContext | None) -> None:
    _handler.clear()
    if handler is not None:
        _handler.append(handler)


def current_context() -> tuple[RunContext | None, str | None]:
    """(run, parent instance id) of the code calling now, as the handler saw its spans."""
    if not _handler:
        return None, None
    return _handler[0].context_of_span(active_span_id.get())


def current_agents() -> tuple[str, ...]:
    """The agent path of the code calling now (an AgentWorkflow's step, _team.py), or ()."""
    if not _handler:
        return ()
    return _handler[0].agents_of_span(active_span_id.get())


def current_timeout() -> KnownTimeout | None:
    """The timeout of the workflow the calling code runs in, which keeps running while a gate holds."""
    if not _handler:
        return None
    return _handler[0].timeout_of_span(active_span_id.get())


# ---- tool call ids --------------------------------------------------------------------------
def scope(run: RunContext | None) -> str:
    """Where a model step's tool calls wait for their tool: its run, or "*" for the implicit run."""
    return run.run_id if run is not None else "*"


_MAX_RUNS = 256
_MAX_PENDING = 64
_pending: OrderedDict[str, list[tuple[str, str, Any]]] = OrderedDict()
_pending_lock = threading.Lock()


def remember_tool_calls(key: str, calls: list[Any]) -> None:
    """A model step asked for these tool calls (`ToolSelection`s or `{"id", "name", "arguments"}`)."""
    entries = []
    for call in calls:
        if isinstance(call, Mapping):
            call_id, name, args = call.get("id"), call.get("name"), call.get("arguments")
        else:
            call_id, name, args = (
                getattr(call, "tool_id", None),
                getattr(call, "tool_name", None),
                getattr(call, "tool_kwargs", None),
            )
        if isinstance(call_id, str) and call_id and isinstance(name, str):
            entries.append((name, call_id, args if isinstance(args, Mapping) else {}))
    if not entries:
        return
    with _pending_lock:
        queue = _pending.setdefault(key, [])
        _pending.move_to_end(key)
        queue.extend(entries)
        del queue[:-_MAX_PENDING]
        while len(_pending) > _MAX_RUNS:
            _pending.popitem(last=False)


def take_tool_call_id(key: str, name: str, arguments: Any) -> str | None:
    """The id of the first pending call of `name` with these arguments (or of `name` alone)."""
    with _pending_lock:
        queue = _pending.get(key)
        if not queue:
            return None
        fallback = None
        for index, (pending_name, call_id, args) in enumerate(queue):
            if pending_name != name:
                continue
            if args == arguments:
                del queue[index]
                return call_id
            if fallback is None:
                fallback = index
        if fallback is None:
            return None
        return queue.pop(fallback)[1]


def forget(key: str) -> None:
    with _pending_lock:
        _pending.pop(key, None)
