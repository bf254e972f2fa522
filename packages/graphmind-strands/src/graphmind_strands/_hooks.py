"""The only hook table of the adapter: `HOOKS`, applied process-wide by `instrument_strands()` (one
`ProcessPatch`) and undone by `uninstrument_strands()`.

Three rows, each on the class that every agent's object of it shares, looked up at call time:

- `Agent.stream_async`: an aborted run reaches the app as `RunAborted`, not the `EventLoopException`
  Strands wraps every error of a cycle in (`_runs.unwrap_abort`; `GraphmindHooks` puts the same row
  on its agent);
- `MiddlewareRegistry.invoke`: each agent's model call and tool execution runs through its
  middleware chain (`InvokeModelStage`, `ExecuteToolStage`); the row puts the gate innermost, around
  the chain's terminal, so the call is one node whatever middleware the app added (`_stages.py`);
- `HookRegistry.invoke_callbacks_async`: an agent's (or a swarm's, a graph's) invocation starts and
  ends with `Before/AfterInvocationEvent` (`Before/AfterMultiAgentInvocationEvent`): the run
  boundaries and the agent of each invocation (`_runs.py`); a swarm's `BeforeNodeCallEvent`: a
  handoff (`_handoffs.py`); the app's own hook callbacks run as before.

An agent given a `GraphmindHooks()` provider is gated by it (it registers the same handlers on
that agent alone) and the rows leave it alone: one node per call either way. Each row's `upstream`
names the line it depends on; tests/test_hooks_upstream.py checks them against the installed Strands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strands.agent.agent import Agent
from strands.hooks import BeforeNodeCallEvent
from strands.hooks.registry import HookRegistry
from strands.middleware._registry import MiddlewareRegistry
from strands.middleware.stages import ExecuteToolStage, InvokeModelStage

from graphmind.adapter import Hook, Patches, ProcessPatch, hook_moved

from . import _runs, _stages
from ._version import SUPPORTED, __version__

MARK = "_graphmind_strands"  # on an agent or orchestrator gated by its own `GraphmindHooks`


def has_own(owner: Any) -> bool:
    try:
        return MARK in vars(owner)
    except TypeError:  # no __dict__: not one of ours
        return False


def wrap_invoke(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    def invoke(self: Any, stage: Any, context: Any, terminal: Any) -> Any:
        if stage is InvokeModelStage or stage is ExecuteToolStage:
            engine = state.engine()
            if engine.live and not has_own(context.agent):
                gate = _stages.model_stage if stage is InvokeModelStage else _stages.tool_stage
                inner = terminal

                def terminal(ctx: Any) -> Any:
                    return gate(engine, ctx, inner)

        return original(self, stage, context, terminal)

    invoke.__wrapped__ = original  # type: ignore[attr-defined]
    return invoke


def wrap_invoke_callbacks(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    async def invoke_callbacks_async(self: Any, event: Any) -> Any:
        if not isinstance(event, _stages.READ_EVENTS) or has_own(_stages.owner_of(event)):
            return await original(self, event)
        if isinstance(event, BeforeNodeCallEvent):
            await _stages.on_node(state.session, event)  # the handoff's gate, before the app's callbacks
            return await original(self, event)
        if _stages.is_before(event):
            _stages.on_event(state.session, event)  # the run opens before the app's callbacks run
            return await original(self, event)
        try:
            return await original(self, event)
        finally:
            _stages.on_event(state.session, event)  # and ends after them

    invoke_callbacks_async.__wrapped__ = original  # type: ignore[attr-defined]
    return invoke_callbacks_async


def wrap_stream_async(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    return _runs.unwrap_abort(original)  # type: ignore[no-any-return]


# strands/agent/agent.py:1391 Agent.stream_async: invoke_async (agent.py:1049), __call__ (through
# invoke_async) and a swarm's or graph's node (multiagent/swarm.py:962, graph.py:1062) read it: an
# aborted run reaches the app as RunAborted, not the EventLoopException Strands wraps it in
STREAM_ASYNC = Hook(
    "",
    "stream_async",
    wrap_stream_async,
    SUPPORTED,
    "strands/agent/agent.py:1391 Agent.stream_async — agent.py:1049 invoke_async, multiagent/swarm.py:962",
)

HOOKS: tuple[tuple[object, Hook[Patches]], ...] = (
    (Agent, STREAM_ASYNC),
    # strands/middleware/_registry.py:144 MiddlewareRegistry.invoke(stage, context, terminal): the model
    # call at strands/event_loop/event_loop.py:623, each tool execution at
    # strands/tools/executors/_executor.py:313 (and :107, a background tool's)
    (
        MiddlewareRegistry,
        Hook(
            "",
            "invoke",
            wrap_invoke,
            SUPPORTED,
            "strands/middleware/_registry.py:144 MiddlewareRegistry.invoke — event_loop/event_loop.py:623 "
            "(InvokeModelStage), tools/executors/_executor.py:313 (ExecuteToolStage)",
        ),
    ),
    # strands/hooks/registry.py:309 HookRegistry.invoke_callbacks_async: BeforeInvocationEvent at
    # strands/agent/agent.py:1631, AfterInvocationEvent in its finally at :1770; a swarm's at
    # strands/multiagent/swarm.py:424 / :476, a graph's at strands/multiagent/graph.py:652 / :709;
    # a swarm's next node, BeforeNodeCallEvent, at strands/multiagent/swarm.py:816
    (
        HookRegistry,
        Hook(
            "",
            "invoke_callbacks_async",
            wrap_invoke_callbacks,
            SUPPORTED,
            "strands/hooks/registry.py:309 HookRegistry.invoke_callbacks_async — agent/agent.py:1631 / :1770, "
            "multiagent/swarm.py:424 / :476, multiagent/graph.py:652 / :709",
        ),
    ),
)


PATCH = ProcessPatch(
    HOOKS, moved=hook_moved("strands-agents", "graphmind-strands", __version__, SUPPORTED, what="agent")
)
