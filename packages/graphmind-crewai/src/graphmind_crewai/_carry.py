"""The run context of a crew kickoff, carried explicitly to the calls its agents make.

CrewAI runs an agent's steps as a `Flow` (crewai/agents/agent_executor.py:187) whose sync methods
run on worker threads; 1.15 copies the context there (`asyncio.to_thread`), but a thread pool that
does not (`Task.execute_async` copies it by hand, crewai/task.py:617; Arize-ai/openinference#2805
is the same loss in another instrumentor) would leave a model or tool call outside the crew's run.
So each kickoff registers its run and the task node that is running, and a call whose context has
no run takes them from here: by its agent's crew when the call names its agent (a model call), else
from the one kickoff in progress (a tool call names no agent; with several crews running at once
and no context, the call runs in no run, as it would uninstrumented).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from graphmind.adapter import Engine, RunContext


@dataclass(eq=False)
class Kickoff:
    run: RunContext
    tasks: list[str] = field(default_factory=list)  # the task nodes running, innermost last


_LOCK = threading.Lock()
_ACTIVE: dict[int, Kickoff] = {}  # id(crew) -> its kickoff, while kickoff() runs


def begin(crew: Any, run: RunContext) -> Kickoff:
    kickoff = Kickoff(run)
    with _LOCK:
        _ACTIVE[id(crew)] = kickoff
    return kickoff


def end(crew: Any, kickoff: Kickoff) -> None:
    with _LOCK:
        if _ACTIVE.get(id(crew)) is kickoff:
            del _ACTIVE[id(crew)]


def for_crew(crew: Any) -> Kickoff | None:
    with _LOCK:
        if crew is not None and id(crew) in _ACTIVE:
            return _ACTIVE[id(crew)]
        return next(iter(_ACTIVE.values())) if len(_ACTIVE) == 1 else None


def place(engine: Engine, crew: Any = None) -> tuple[RunContext | None, str | None]:
    """The (run, parent node) a call starts in: its context's when it has a run, else the carried ones."""
    if engine.current_run() is not None:
        return None, None  # start_node's defaults: the calling context's run and enclosing node
    kickoff = for_crew(crew)
    if kickoff is None:
        return None, None
    with _LOCK:
        parent = kickoff.tasks[-1] if kickoff.tasks else None
    return kickoff.run, parent


def push_task(kickoff: Kickoff | None, instance_id: str) -> None:
    if kickoff is not None:
        with _LOCK:
            kickoff.tasks.append(instance_id)


def pop_task(kickoff: Kickoff | None, instance_id: str) -> None:
    if kickoff is not None:
        with _LOCK:
            if instance_id in kickoff.tasks:
                kickoff.tasks.remove(instance_id)
