"""A crew's kickoff is one GraphMind run; each task a gated `task:<name>` node.

`Crew.kickoff` (crewai/crew.py:997) runs the crew; `kickoff_async` runs that very method on a
thread (crewai/crew.py:1189), `kickoff_for_each` calls it per input: one row covers the three. A
kickoff inside a run of the app's (`with graphmind.run(...)`) or inside a node opens no run of its
own: its nodes nest where they are. Each task runs through `Task._execute_core`
(crewai/task.py:809), from `execute_sync` (:593) and from `execute_async`'s thread (:635): its
node's before gate offers continue or abort (a task's output cannot be injected: its agent makes it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import graphmind
from graphmind import ReplayDivergence
from graphmind.adapter import NodeSpec, Patches, RunAborted

from . import _agents, _carry, _describe


def _client(state: Patches) -> graphmind.Client:
    return state.session if state.session is not None else graphmind.get_client()


def aborted_behind(exc: BaseException) -> BaseException | None:
    """The RunAborted (or replay divergence) behind what CrewAI raised: an abort inside an agent's
    step reaches kickoff's caller through CrewAI's own handling (its Flow re-raises, a tool's
    error becomes a message to the model and the next step raises)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, RunAborted | ReplayDivergence):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _reraise_aborted(exc: Exception) -> None:
    aborted = aborted_behind(exc)
    if aborted is not None and aborted is not exc:
        raise aborted from exc


def wrap_kickoff(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    def kickoff(self: Any, *args: Any, **kwargs: Any) -> Any:
        engine = state.engine()  # per call: graphmind.configure() may replace the default client
        if not engine.live or engine.current_run() is not None or engine.current_parent() is not None:
            try:
                return original(self, *args, **kwargs)
            except Exception as exc:
                _reraise_aborted(exc)
                raise
        meta = {"framework": "crewai", "process": str(getattr(self, "process", "") or "")}
        with _client(state).run(_describe.crew_name(self), meta) as run:
            carried = _carry.begin(self, run)
            try:
                return original(self, *args, **kwargs)
            except Exception as exc:
                _reraise_aborted(exc)
                raise
            finally:
                _carry.end(self, carried)

    kickoff.__wrapped__ = original  # type: ignore[attr-defined]
    return kickoff


def _no_inject(value: Any) -> Any:
    raise ValueError("a task's output cannot be injected: its agent makes it (continue, or abort the run)")


def wrap_execute_core(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    def _execute_core(self: Any, agent: Any, context: Any, tools: Any) -> Any:
        engine = state.engine()
        if not engine.live:
            return original(self, agent, context, tools)
        crew = getattr(agent or getattr(self, "agent", None), "crew", None)
        run, parent = _carry.place(engine, crew)
        name = _describe.task_name(self)
        spec = NodeSpec(
            name,
            "custom",
            _describe.task_input(self, agent, context),
            node_id=f"task:{name}",
            attrs={"framework": "crewai", "task": True, "agent": _describe.agent_name(agent or self.agent)},
            actions=("continue", "abort"),
        )
        with _agents.scope(agent or getattr(self, "agent", None)):  # the task is its agent's work
            ex = engine.start_node(spec, run=run, parent_instance_id=parent)
            kickoff = _carry.for_crew(crew)
            _carry.push_task(kickoff, ex.instance_id)
            try:
                return ex.run_sync(
                    lambda: original(self, agent, context, tools),
                    _describe.task_output,
                    _no_inject,
                    None,
                    None,
                )
            finally:
                _carry.pop_task(kickoff, ex.instance_id)

    _execute_core.__wrapped__ = original  # type: ignore[attr-defined]
    return _execute_core
