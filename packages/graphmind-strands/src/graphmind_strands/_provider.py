"""`GraphmindHooks()`: one agent (or one swarm or graph) gated, as Strands' own hook provider:
`Agent(hooks=[GraphmindHooks()])`, or `agent.hooks.add_hook(GraphmindHooks())` on an agent built
already. Strands hands a provider its registry only (strands/hooks/registry.py:287 `add_hook`), so
the provider finds its agent in the first event that names it, `AgentInitializedEvent`
(strands/agent/agent.py, at the end of `__init__`) or else `BeforeInvocationEvent`, and adds the two
Wrap handlers to that agent's middleware (`agent.add_middleware`, strands/agent/agent.py:1311),
last, so they sit innermost, next to the real call. Its callbacks are plain functions: Strands calls
them the same from `invoke_callbacks_async` and from the sync `invoke_callbacks` (which raises on a
coroutine callback).
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from strands.hooks import (
    AgentInitializedEvent,
    BeforeNodeCallEvent,
    HookProvider,
    HookRegistry,
    MultiAgentInitializedEvent,
)
from strands.middleware.stages import ExecuteToolStage, InvokeModelStage

import graphmind
from graphmind.adapter import Engine, Patches, enabled_for, engine_for

from . import _stages
from ._hooks import MARK, STREAM_ASYNC


class GraphmindHooks(HookProvider):
    """Gates every model call and tool call of the agent it is given to (and a swarm's or a graph's
    run, given to the orchestrator). `session`: the GraphMind client to report to (default:
    `graphmind.get_client()` at each call). A disabled session registers nothing; given twice to one
    agent, the first gates it; `detach()` undoes it (the agent's calls go straight through)."""

    def __init__(self, *, session: graphmind.Client | None = None) -> None:
        self.session = session
        self._owners: weakref.WeakSet[Any] = weakref.WeakSet()
        self._patches = Patches(session)
        self._detached = False

    def engine(self) -> Engine:
        return engine_for(self.session)  # per call: graphmind.configure() may replace the default client

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        if not enabled_for(self.session):  # a disabled client: nothing registered at all
            return
        registry.add_callback(AgentInitializedEvent, self._on_initialized)
        registry.add_callback(MultiAgentInitializedEvent, self._on_multi_agent_initialized)
        for event_type in _stages.RUN_EVENTS:
            registry.add_callback(event_type, self._on_run_event)
        registry.add_callback(BeforeNodeCallEvent, self._on_node)

    def _attach(self, owner: Any, agent: bool) -> bool:
        """Marks `owner` as gated by this provider (and gives an agent the two handlers); False when
        another provider has it already."""
        if self._detached:
            return False
        current = vars(owner).get(MARK)
        if current is not None:
            return current is self
        setattr(owner, MARK, self)
        self._owners.add(owner)
        if agent:
            owner.add_middleware(InvokeModelStage, self._model_stage)
            owner.add_middleware(ExecuteToolStage, self._tool_stage)
            self._patches.apply(
                owner, (STREAM_ASYNC,), self._patches
            )  # an abort reaches the app as RunAborted
        return True

    def _on_initialized(self, event: AgentInitializedEvent) -> None:
        self._attach(event.agent, agent=True)

    def _on_multi_agent_initialized(self, event: MultiAgentInitializedEvent) -> None:
        self._attach(event.source, agent=False)

    def _on_run_event(self, event: Any) -> None:
        owner = _stages.owner_of(event)
        if self._attach(owner, agent=not _stages.is_multi_agent(event)):
            _stages.on_event(self.session, event)

    async def _on_node(self, event: BeforeNodeCallEvent) -> None:
        if self._attach(event.source, agent=False):
            await _stages.on_node(self.session, event)

    def _mine(self, ctx: Any) -> bool:
        return vars(ctx.agent).get(MARK) is self

    def _model_stage(self, ctx: Any, next_fn: Any) -> AsyncIterator[Any]:
        if not self._mine(ctx):  # detached, or another provider gates this agent
            return next_fn(ctx)  # type: ignore[no-any-return]
        return _stages.model_stage(self.engine(), ctx, next_fn)

    def _tool_stage(self, ctx: Any, next_fn: Any) -> AsyncIterator[Any]:
        if not self._mine(ctx):  # detached, or another provider gates this agent
            return next_fn(ctx)  # type: ignore[no-any-return]
        return _stages.tool_stage(self.engine(), ctx, next_fn)

    def detach(self) -> None:
        """Undoes this provider on every agent it gates: their calls go straight through (Strands
        keeps the callbacks and handlers it registered; they do nothing from now on)."""
        for owner in list(self._owners):
            if vars(owner).get(MARK) is self:
                delattr(owner, MARK)
        self._owners = weakref.WeakSet()
        self._patches.undo()
        self._detached = True


A = TypeVar("A")


def instrument_agent(agent: A, *, session: graphmind.Client | None = None) -> A:
    """Gates every model call and tool call of an agent built already, in place (returns it): a
    `GraphmindHooks` added to its hooks. Twice is once; a disabled session changes nothing at all."""
    if not enabled_for(session) or vars(agent).get(MARK) is not None:
        return agent
    hooks = GraphmindHooks(session=session)
    agent.hooks.add_hook(hooks)  # type: ignore[attr-defined]
    hooks._attach(agent, agent=True)
    return agent


def uninstrument_agent(agent: A) -> A:
    """Undoes `instrument_agent` (or an agent's `GraphmindHooks`) exactly: its calls go straight through."""
    hooks = vars(agent).get(MARK)
    if isinstance(hooks, GraphmindHooks):
        hooks.detach()
    return agent
