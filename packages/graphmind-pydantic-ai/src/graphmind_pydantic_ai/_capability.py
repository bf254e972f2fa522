"""`GraphmindCapability`: the one object that gates an agent, as Pydantic AI's own capability
(`Agent(..., capabilities=[GraphmindCapability()])`; `instrument_pydantic_ai(agent)` adds it to each
run of an existing agent).

- `wrap_run` (pydantic_ai/capabilities/abstract.py:894): the agent run is a GraphMind run named
  after the agent, and its calls belong to that agent (`agent_scope`); inside a run already (a
  `client.run(...)`, or an agent delegated to from a tool), the agent's nodes join it, children of
  the node that called it, and the delegated agent's model steps are `llm:step@<agent>`.
- `get_wrapper_model` (abstract.py:783): each model request an `llm:step` node (`_model.py`).
- `wrap_tool_execute` (abstract.py:1373): each tool call a `tool:<name>` node with the model's
  tool-call id; its handler runs `before_tool_execute`, the tool and `after_tool_execute`, and
  may be called again (retry). Output tools are internal and never reach it
  (pydantic_ai/tool_manager.py:748), so an output tool is not a node.

Deferred tools (`requires_approval`, `CallDeferred`) raise before the tool body runs: the node
ends with that control-flow exception and the framework handles it exactly as without GraphMind.
No hook here sets a `timeout` (a hold must never raise `HookTimeoutError`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from pydantic_ai import exceptions
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.abstract import WrapRunHandler, WrapToolExecuteHandler
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.run import AgentRunResult
from pydantic_ai.tools import RunContext, ToolDefinition

import graphmind
from graphmind.adapter import Engine, NodeSpec, agent_scope, engine_for, framework_effect, thread_id

from . import _describe, _inject
from ._model import GatedModel, gated_model

# What a tool (or a hook inside the handler) raises to steer the run, handled by the framework
# (pydantic_ai/tool_manager.py:758 re-raises them untouched; ModelRetry becomes a retry prompt):
# the node records it and the app sees it as without GraphMind, never an error gate.
# Names, not imports: `ToolFailed` / `ToolFailedError` are newer than the range's floor (2.15).
CONTROL_FLOW_NAMES = (
    "ModelRetry",
    "ToolFailed",
    "CallDeferred",
    "ApprovalRequired",
    "SkipToolExecution",
    "ToolRetryError",
    "ToolFailedError",
)
CONTROL_FLOW: tuple[type[BaseException], ...] = tuple(
    getattr(exceptions, name) for name in CONTROL_FLOW_NAMES if hasattr(exceptions, name)
)


@dataclass
class _ControlFlow:
    exc: BaseException


def _describe_tool_output(result: Any) -> Any:
    if isinstance(result, _ControlFlow):
        return {"controlFlow": type(result.exc).__name__, "message": str(result.exc)}
    return _describe.tool_result(result)


def _tool(ctx: RunContext[Any], name: str) -> Any:
    """The run's `ToolsetTool` of that name (its arguments validator, its toolset), or None."""
    manager = ctx.tool_manager
    return (manager.tools or {}).get(name) if manager is not None else None


def _tool_function(ctx: RunContext[Any], name: str) -> Callable[..., Any] | None:
    """The Python function behind a function tool (for its return annotation, and to reload), or None."""
    tool = _tool(ctx, name)
    toolset = getattr(tool, "toolset", None)
    original = getattr(tool, "original_name", None) or name
    for _ in range(16):  # WrapperToolsets nest; a loop bound, not a depth anyone reaches
        if toolset is None:
            return None
        tools = getattr(toolset, "tools", None)
        if isinstance(tools, dict) and original in tools:
            return getattr(tools[original], "function", None)
        toolset = getattr(toolset, "wrapped", None)
    return None


@dataclass
class GraphmindCapability(AbstractCapability[Any]):
    """Gates every model request and tool call of the agent it is given to.

    `session`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    """

    _: KW_ONLY
    session: graphmind.Client | None = None
    id: str | None = "graphmind"
    # The last model wrapped and its wrapper: one `GatedModel` per agent model rather than one per
    # attempt (`get_wrapper_model` is called for every attempt, pydantic_ai/_agent_graph.py:3294).
    # A wrapper holds no per-call state (the engine is looked up per request), so every attempt and
    # every run of that model may share it, as they share the model itself.
    _gated: tuple[Model, GatedModel] | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # not built from an agent spec: it holds a live client

    def engine(self) -> Engine:
        return engine_for(self.session)  # per call: graphmind.configure() may replace the default client

    async def wrap_run(self, ctx: RunContext[Any], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        engine = self.engine()
        agent = ctx.agent
        name = str((getattr(agent, "name", None) if agent is not None else None) or "agent")
        if not engine.live:
            return await handler()
        # The agent its calls belong to (core names its steps: docs/protocol.md, "Agents"); an agent
        # run inside another agent's tool extends the agent path, its steps a node of their own.
        if engine.current_run() is not None:
            with agent_scope(name):
                return await handler()
        client = self.session or graphmind.get_client()
        async with client.run(name, {"framework": "pydantic-ai"}, thread=_thread(ctx)):
            with agent_scope(name):
                return await handler()

    def get_wrapper_model(self, model: Model) -> Model | None:
        if isinstance(model, GatedModel):
            return None  # one node per request, however the capability got into the run twice
        gated = self._gated
        if gated is not None and gated[0] is model:
            return gated[1]
        wrapper = gated_model(model, self.engine)
        self._gated = (model, wrapper)
        return wrapper

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        engine = self.engine()
        if not engine.live:
            return await handler(args)

        async def run_tool(args: dict[str, Any] = args) -> Any:
            try:
                return await handler(args)
            except CONTROL_FLOW as exc:  # the framework's own flow, not a failure: no error gate
                return _ControlFlow(exc)

        def edit(value: Any) -> Callable[[], Any]:  # an edited input: the same handler, other arguments
            edited = _inject.tool_args(value, _tool(ctx, tool_def.name))
            return lambda: run_tool(edited)

        spec = engine.spec_or_none(
            "tool",
            tool_def.name,
            lambda: NodeSpec(
                tool_def.name,
                "tool",
                _describe._json(args),
                instance_id=call.tool_call_id or None,
                attrs={"framework": "pydantic-ai"},
                edit=edit,
                function=_tool_function(ctx, tool_def.name),  # reload: core puts new code into it
                # an approval-required tool (`Tool(requires_approval=True)` -> kind "unapproved",
                # pydantic_ai/tools.py:578) changes something: a write (docs/effects.md)
                effects=framework_effect("write", "requires_approval")
                if tool_def.kind == "unapproved"
                else None,
            ),
        )
        if spec is None:
            return await handler(args)

        def convert(value: Any) -> Any:  # only when a value is injected
            return _inject.tool_result(_tool_function(ctx, tool_def.name), value)

        result = await engine.aexecute(
            spec, run_tool, describe_output=_describe_tool_output, from_injected=convert
        )
        if isinstance(result, _ControlFlow):
            raise result.exc
        return result


def _thread(ctx: RunContext[Any]) -> str | None:
    """The conversation this run is one turn of: Pydantic AI's own `conversation_id` (resolved
    before the run starts from the `conversation_id=` argument or the `message_history` given,
    pydantic_ai/_agent_graph.py:331 `resolve_conversation_id`, so a run continuing another's
    history shares its id). A release without it: the run id of the history's first message (the
    run that began the conversation), else this run's own id."""
    found = thread_id(getattr(ctx, "conversation_id", None))
    if found is not None:
        return found
    messages = getattr(ctx, "messages", None) or []
    first = getattr(messages[0], "run_id", None) if messages else None
    return thread_id(first) or thread_id(getattr(ctx, "run_id", None))
