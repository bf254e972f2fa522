"""One model call, one node, when two adapters see it.

An adapter of an agent framework that calls a provider SDK with an adapter of its own (the OpenAI
Agents SDK's models call the `openai` client, which graphmind-openai may have instrumented) records
the model call at its own level, with what only it knows (the agent, its handoffs), and marks the
real call it makes as owned. The provider SDK's wrappers (graphmind.adapter.stainless) then pass that
call straight through: no second `llm:step` node for the same request, no second gate.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["model_call_owner", "owned_model_call"]

_OWNER: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "graphmind_model_call_owner", default=None
)


@contextmanager
def owned_model_call(adapter: str) -> Iterator[None]:
    """Inside this block the model calls belong to `adapter` (its node): provider adapters pass them through."""
    token = _OWNER.set(adapter)
    try:
        yield
    finally:
        _OWNER.reset(token)


def model_call_owner() -> str | None:
    """The adapter that owns the model call being made here, or None."""
    return _OWNER.get()
