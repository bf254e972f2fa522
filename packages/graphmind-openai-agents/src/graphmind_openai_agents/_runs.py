"""`Runner.run` / `run_sync` / `run_streamed`: one GraphMind run per agent run, named after the
starting agent.

`Runner.run` and `run_sync` both await `AgentRunner.run` (agents/run.py:574; `run_sync` schedules
it at agents/run.py:2596 in `_run_sync_impl`), so one row on that method covers both. `run_streamed` returns at once and
runs the loop in a task (agents/run.py:2922) that awaits the module's `start_streaming`
(agents/run.py:2902, imported at :133): its row opens the run inside that task, so the nodes of the
streamed run belong to it. A run started inside a run of the app's (`with graphmind.run(...)`) or
inside a node (an `agent.as_tool()` run inside its tool's node) opens no run of its own: its nodes
nest where they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import graphmind
from graphmind import ReplayDivergence
from graphmind.adapter import Patches, RunAborted, agent_scope, thread_id


def _opens_run(state: Patches) -> bool:
    engine = state.engine()
    return engine.live and engine.current_run() is None and engine.current_parent() is None


def _client(state: Patches) -> graphmind.Client:
    return state.session if state.session is not None else graphmind.get_client()


def _name(agent: Any) -> str:
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else "agent"


def _thread(options: Mapping[str, Any]) -> str | None:
    """The conversation a run is one turn of, as the SDK names it: `RunConfig.group_id` (its link
    between the traces of one conversation, agents/run_config.py:437; the config may be a dict),
    else `conversation_id` (a server-side conversation), else the Session's `session_id`
    (agents/memory/session.py:60)."""
    config = options.get("run_config")
    group = config.get("group_id") if isinstance(config, Mapping) else getattr(config, "group_id", None)
    return (
        thread_id(group)
        or thread_id(options.get("conversation_id"))
        or thread_id(getattr(options.get("session"), "session_id", None))
    )


def _aborted(exc: BaseException) -> BaseException | None:
    """The RunAborted (or replay divergence) behind an SDK error: a tool's error reaches the app as
    the SDK's `UserError("Error running tool ...")` raised from it
    (agents/run_internal/tool_execution.py:1861)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, RunAborted | ReplayDivergence):
            return current
        seen.add(id(current))
        current = current.__cause__
    return None


def _raise_aborted(exc: Exception) -> None:
    """An aborted run ends with RunAborted itself (a replay that diverged under `on_divergence="fail"`
    with its ReplayDivergence), whatever the SDK wrapped it in on the way out: raises that one from
    `exc` when there is one (the caller re-raises `exc` itself otherwise)."""
    aborted = _aborted(exc)
    if aborted is not None and aborted is not exc:
        raise aborted from exc


# Each wrapper awaits the original in its own frame (not through a helper coroutine): every time
# the run suspends (each await of the loop's), its resumption passes one frame less. The abort is
# unwrapped inside the run scope, so the run ends as aborted.
def wrap_runner_run(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    async def run(self: Any, starting_agent: Any, *args: Any, **kwargs: Any) -> Any:
        name = _name(starting_agent)
        if not _opens_run(state):
            try:
                with agent_scope(name):  # a nested run (`agent.as_tool()`): the agent path grows
                    return await original(self, starting_agent, *args, **kwargs)
            except Exception as exc:
                _raise_aborted(exc)
                raise
        async with _client(state).run(name, {"framework": "openai-agents"}, thread=_thread(kwargs)):
            try:
                with agent_scope(name):  # the run's root agent; a handoff's target is entered per turn
                    return await original(self, starting_agent, *args, **kwargs)
            except Exception as exc:
                _raise_aborted(exc)
                raise

    run.__wrapped__ = original  # type: ignore[attr-defined]
    return run


def wrap_start_streaming(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    async def start_streaming(**kwargs: Any) -> Any:
        name = _name(kwargs.get("starting_agent"))
        if not _opens_run(state):
            try:
                with agent_scope(name):
                    return await original(**kwargs)
            except Exception as exc:
                _raise_aborted(exc)
                raise
        meta = {"framework": "openai-agents", "streamed": True}
        async with _client(state).run(name, meta, thread=_thread(kwargs)):
            try:
                with agent_scope(name):
                    return await original(**kwargs)
            except Exception as exc:
                _raise_aborted(exc)
                raise

    start_streaming.__wrapped__ = original  # type: ignore[attr-defined]
    return start_streaming
