"""`instrument_pydantic_ai(agent)` / `uninstrument_pydantic_ai(agent)`: an existing agent, in place,
on `graphmind.adapter`'s scaffold (one `Hook` row, one `Patches`, `instrument_once`).

The one hook is the agent's `iter`: every way to run an agent goes through it (`run`,
pydantic_ai/agent/abstract.py:632; `run_stream`, abstract.py:1046; `run_sync` and
`run_stream_sync` drive those; `run_stream_events` drives `run`), and it takes per-run
`capabilities=` (pydantic_ai/agent/__init__.py:1503), so the wrapper adds one
`GraphmindCapability` to each run and the agent's own capabilities stay as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic_ai import Agent

import graphmind
from graphmind.adapter import Hook, Patches, hook_moved, instrument_once, uninstrument_once

from ._capability import GraphmindCapability
from ._version import SUPPORTED, __version__

A = TypeVar("A", bound=Agent[Any, Any])
MARK = "_graphmind_pydantic_ai"


@dataclass(eq=False)
class State(Patches):
    capability: GraphmindCapability | None = None


def _has_ours(capabilities: Any) -> bool:
    return any(isinstance(c, GraphmindCapability) for c in capabilities or ())


def wrap_iter(original: Callable[..., Any], state: State) -> Callable[..., Any]:
    def iter(*args: Any, capabilities: Any = None, **kwargs: Any) -> Any:
        assert state.capability is not None
        if not _has_ours(capabilities):  # a GraphmindCapability given to this run already: one is enough
            capabilities = [*(capabilities or ()), state.capability]
        return original(*args, capabilities=capabilities, **kwargs)

    return iter


HOOKS = (
    Hook(
        "",
        "iter",
        wrap_iter,
        SUPPORTED,
        "pydantic_ai/agent/__init__.py:1481 Agent.iter(..., capabilities=) — run (agent/abstract.py:632) "
        "and run_stream (agent/abstract.py:1046) enter it; run_sync, run_stream_sync, run_stream_events drive those",
    ),
)


def instrument(agent: A, session: graphmind.Client | None) -> A:
    def apply(target: Any) -> State:
        if _has_ours(getattr(getattr(target, "_root_capability", None), "capabilities", None)):
            state = State(session)  # built with GraphmindCapability already: nothing to add
            return state
        state = State(session, capability=GraphmindCapability(session=session))
        state.apply(target, HOOKS, state)
        return state

    return instrument_once(
        agent,
        MARK,
        session,
        apply,
        hook_moved("pydantic-ai-slim", "graphmind-pydantic-ai", __version__, SUPPORTED),
    )


def uninstrument(agent: A) -> A:
    return uninstrument_once(agent, MARK)
