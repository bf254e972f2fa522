"""One model call, one node, when two adapters see it.

An adapter of an agent framework that calls a provider SDK with an adapter of its own (the OpenAI
Agents SDK's models call the `openai` client, which graphmind-openai may have instrumented) records
the model call at its own level, with what only it knows (the agent, its handoffs), and marks the
real call it makes as owned. The provider SDK's wrappers (graphmind.adapter.stainless) then pass that
call straight through: no second `llm:step` node for the same request, no second gate.
"""

from __future__ import annotations

import contextvars
from types import TracebackType

__all__ = ["model_call_owner", "owned_model_call"]

_OWNER: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "graphmind_model_call_owner", default=None
)


class owned_model_call:  # lower case: used as a function, `with owned_model_call("x"):`
    """Inside this block the model calls belong to `adapter` (its node): provider adapters pass them
    through. A class, not a generator: it is entered once per model call."""

    __slots__ = ("_adapter", "_token")

    def __init__(self, adapter: str) -> None:
        self._adapter = adapter
        self._token: contextvars.Token[str | None] | None = None

    def __enter__(self) -> None:
        self._token = _OWNER.set(self._adapter)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._token is not None:
            _OWNER.reset(self._token)
            self._token = None


def model_call_owner() -> str | None:
    """The adapter that owns the model call being made here, or None."""
    return _OWNER.get()
