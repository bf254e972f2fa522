"""One GraphMind run per agent invocation (or per multi-agent invocation: a swarm's or a graph's
agents share their orchestrator's run), opened by `BeforeInvocationEvent` /
`BeforeMultiAgentInvocationEvent` and ended by their `After...` twins, which Strands invokes in the
`finally` of every invocation (strands/agent/agent.py:1770, strands/multiagent/swarm.py:476).

The run is the app's own `client.run(...)` scope, entered in the one callback and exited in the
other: both run inside the invocation's stream, in the same context as its model and tool stages
(and the tasks it starts copy it), so every node of the invocation belongs to the run and a nested
invocation (an agent used as a tool, a swarm's agents) joins it. Inside a run of the app's (`with
graphmind.run(...)`) or a node (an agent called from a gated tool), no run is opened: the nodes nest
where they are.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import graphmind
from graphmind.adapter import RunAborted, agent_scope, engine_for


@dataclass
class _Open:
    scope: Any  # the entered `client.run(...)` scope
    owner: Any  # the agent or orchestrator whose invocation opened it
    error: BaseException | None = None


_CURRENT: ContextVar[_Open | None] = ContextVar("graphmind_strands_run", default=None)
# The agents whose invocations the calling context is inside, innermost last, each with its entered
# `agent_scope`: every node of an agent's invocation names the agent (a swarm's two agents get
# `llm:step` and `llm:step@<other>`, docs/strands.md, "Swarms and graphs").
_AGENTS: ContextVar[tuple[tuple[Any, agent_scope], ...]] = ContextVar("graphmind_strands_agents", default=())


def enter_agent(owner: Any, name: str) -> None:
    scope = agent_scope(name)
    scope.__enter__()
    _AGENTS.set((*_AGENTS.get(), (owner, scope)))


def leave_agent(owner: Any) -> None:
    entered = _AGENTS.get()
    if not entered or entered[-1][0] is not owner:
        return
    _AGENTS.set(entered[:-1])
    entered[-1][1].__exit__(None, None, None)


def begin(session: graphmind.Client | None, owner: Any, name: str) -> None:
    engine = engine_for(session)
    if not engine.live or _CURRENT.get() is not None:
        return
    if engine.current_run() is not None or engine.current_parent() is not None:
        return
    client = session if session is not None else graphmind.get_client()
    scope = client.run(name, {"framework": "strands"})
    scope.__enter__()
    _CURRENT.set(_Open(scope, owner))


def end(owner: Any) -> None:
    current = _CURRENT.get()
    if current is None or current.owner is not owner:
        return
    _CURRENT.set(None)
    error = current.error
    current.scope.__exit__(type(error) if error is not None else None, error, None)


def note_error(exc: BaseException | None) -> None:
    """The error a model call raised into the invocation (None: a later call went through): the
    run ends with it when the invocation ends. RunAborted stays."""
    current = _CURRENT.get()
    if current is not None and not isinstance(current.error, RunAborted):
        current.error = exc


def name_of(owner: Any, default: str) -> str:
    name = getattr(owner, "name", None) or getattr(owner, "id", None)
    return name if isinstance(name, str) and name else default


def aborted_in(exc: BaseException) -> RunAborted | None:
    """The RunAborted behind an error Strands wrapped: the event loop wraps every error of a cycle in
    its `EventLoopException` (strands/event_loop/event_loop.py:425, `from e`), and a tool's error
    becomes an error result (the run then stops at the next model call, which raises it)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, RunAborted):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def unwrap_abort(original: Any) -> Any:
    """`stream_async` that ends with RunAborted itself when the run was aborted, whatever Strands
    wrapped it in (works on the class's function and on an agent's bound method alike)."""

    async def stream_async(*args: Any, **kwargs: Any) -> Any:
        events = original(*args, **kwargs)
        try:
            async for event in events:
                yield event
        except Exception as exc:
            aborted = aborted_in(exc)
            if aborted is not None and aborted is not exc:
                raise aborted from exc
            raise
        finally:
            await events.aclose()  # left early: Strands' own cleanup runs now, as without us

    stream_async.__wrapped__ = original  # type: ignore[attr-defined]
    return stream_async
