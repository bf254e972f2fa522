"""One GraphMind run per agent invocation (or per multi-agent invocation: a swarm's or a graph's
agents share their orchestrator's run), opened by `BeforeInvocationEvent` /
`BeforeMultiAgentInvocationEvent` and ended by their `After...` twins, which Strands invokes in
the `finally` of every invocation (strands/agent/agent.py:1770, strands/multiagent/swarm.py:476).

The run is kept in a context variable of this module: the hooks run inside the invocation's own
stream (the same context as its model and tool stages, and copied into the tasks it starts), so a
nested invocation (an agent used as a tool, a swarm's agents) sees its caller's run and opens none.
Inside a run of the app's (`with graphmind.run(...)`) or a node (an agent called from a gated
tool), no run is opened either: the nodes nest where they are.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from graphmind.adapter import Engine, RunAborted, RunContext


@dataclass
class _Open:
    run: RunContext
    owner: Any  # the agent or orchestrator whose invocation opened it
    error: BaseException | None = field(default=None)


_CURRENT: ContextVar[_Open | None] = ContextVar("graphmind_strands_run", default=None)


def run_of(engine: Engine) -> RunContext | None:
    """The run a call of the calling context belongs to (None: the engine's own choice, the app's
    run or the implicit one)."""
    if engine.current_run() is not None:
        return None
    current = _CURRENT.get()
    return current.run if current is not None else None


def begin(engine: Engine, owner: Any, name: str, meta: dict[str, Any]) -> None:
    if not engine.live or _CURRENT.get() is not None:
        return
    if engine.current_run() is not None or engine.current_parent() is not None:
        return
    _CURRENT.set(_Open(engine.begin_run(name, meta), owner))


def end(engine: Engine, owner: Any) -> None:
    current = _CURRENT.get()
    if current is None or current.owner is not owner:
        return
    _CURRENT.set(None)
    engine.end_run(current.run, current.error)


def note_error(exc: BaseException | None) -> None:
    """The error a call raised into the invocation (None: a later call went through): the run ends
    with it when the invocation ends. RunAborted always stays."""
    current = _CURRENT.get()
    if current is not None and not isinstance(current.error, RunAborted):
        current.error = exc


def name_of(owner: Any, default: str) -> str:
    name = getattr(owner, "name", None) or getattr(owner, "id", None)
    return name if isinstance(name, str) and name else default
