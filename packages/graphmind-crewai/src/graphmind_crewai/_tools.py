"""Each tool call: one gated `tool:<name>` node; a delegation to a coworker: a gated handoff node.

With native function calling (every provider CrewAI calls natively), the executor calls
`tool.run(**args)` (crewai/agents/agent_executor.py:2243; the callable is `tool.run`,
crewai/utilities/agent_utils.py:303). `BaseTool.run` (crewai/tools/base_tool.py:326) and the
`@tool` decorator's `Tool.run` (base_tool.py:532, which does not call the base's) are the two
methods: a row on each gates every tool, CrewAI's coworker tools included. Why not CrewAI's
`before_tool_call` hook (crewai/hooks/tool_hooks.py): it blocks a call only by turning its result
into "Tool execution blocked by hook" (agent_executor.py:2237), so the model would see that text,
not an injected value. Here an inject returns the tool's result with no body run, and CrewAI
formats it for the model as it would the real one.

A coworker tool (`Delegate work to coworker`, crewai/tools/agent_tools/delegate_work_tool.py:22;
`Ask question to coworker`, ask_question_tool.py:20) runs another agent: its node is core's gated
handoff, `handoff:<from>-><coworker>` (continue, edit what is handed over, inject the coworker's
answer, abort), and the coworker's steps and tools run inside it, in the coworker's scope.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from crewai.tools.agent_tools.base_agent_tools import BaseAgentTool
from crewai.utilities.string_utils import sanitize_tool_name

from graphmind.adapter import NodeSpec, Patches, handoff

from . import _agents, _carry, _describe, _edit, _inject


def _function(tool: Any) -> Callable[..., Any] | None:
    """The Python function the tool runs, for reload (`NodeSpec.function`): a `@tool`'s `func`, a
    `BaseTool` subclass's `_run`."""
    func = getattr(tool, "func", None)
    if inspect.isfunction(func):
        return func
    run = getattr(type(tool), "_run", None)
    return run if inspect.isfunction(run) else None


def _delegated(value: Any) -> Any:
    """What a coworker tool returns (its coworker's answer, a text) from an injected JSON value."""
    return value if isinstance(value, str) else json.dumps(value)


def _coworker(tool: Any, kwargs: dict[str, Any]) -> str:
    """The coworker's role as its agent reports it, matched as CrewAI matches the model's spelling
    (`BaseAgentTool._get_coworker` and `sanitize_agent_name`, crewai/tools/agent_tools/
    base_agent_tools.py:38 and :20: no case, no quotes, a list's first), so the handoff's target is
    the agent that runs."""
    named = str(kwargs.get("coworker") or kwargs.get("co_worker") or "").strip()
    try:
        named = str(tool._get_coworker(named or None, **kwargs) or "")
        wanted = tool.sanitize_agent_name(named)
        for agent in getattr(tool, "agents", None) or []:
            if tool.sanitize_agent_name(str(getattr(agent, "role", ""))) == wanted:
                return _describe.agent_name(agent)
    except Exception:  # another release's helpers: the name as the model wrote it
        pass
    return named.strip() or "coworker"


def _handoff(engine: Any, tool: Any, kwargs: dict[str, Any], run: Callable[[dict[str, Any]], Any]) -> Any:
    """The delegation through core's gated handoff: the coworker's work runs inside it (in its
    agent's scope); an edit changes what the coworker is handed, an inject answers for the coworker
    (its work never runs)."""
    coworker = _coworker(tool, kwargs)

    def call(handed: Any) -> Any:
        if not isinstance(handed, dict):
            raise ValueError("a CrewAI delegation's input is an object of the tool's arguments by name")
        return run(handed)

    decided = handoff(
        engine,
        _agents.current(),
        coworker,
        _describe.tool_input((), kwargs),
        call=call,
        from_injected=_delegated,
        attrs={"framework": "crewai", "tool": str(getattr(tool, "name", ""))},
    )
    return decided.output


def _tool_node(
    engine: Any,
    tool: Any,
    node_input: Any,
    body: Callable[[dict[str, Any]], Any],
    arguments: dict[str, Any],
    editable: bool = True,
) -> Any:
    run_ctx, parent = _carry.place(engine)
    spec = NodeSpec(
        sanitize_tool_name(str(getattr(tool, "name", "tool"))),
        "tool",
        node_input,
        attrs={"framework": "crewai"},
        function=_function(getattr(tool, "_original_tool", None) or tool),
        edit=_edit.tool_edit(body) if editable else None,  # positional arguments have no names to edit
    )
    ex = engine.start_node(spec, run=run_ctx, parent_instance_id=parent)
    return ex.run_sync(lambda: body(arguments), _describe.tool_output, _inject.tool_result, None, None)


def wrap_run(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        engine = state.engine()  # per call: graphmind.configure() may replace the default client
        if not engine.live:
            return original(self, *args, **kwargs)
        if isinstance(self, BaseAgentTool) and not args:
            return _handoff(engine, self, kwargs, lambda handed: original(self, **handed))

        def body(arguments: dict[str, Any]) -> Any:
            return original(self, *args, **arguments)

        return _tool_node(engine, self, _describe.tool_input(args, kwargs), body, kwargs, editable=not args)

    run.__wrapped__ = original  # type: ignore[attr-defined]
    return run


def wrap_invoke(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """Text (ReAct) tool calling: `ToolUsage` calls `CrewStructuredTool.invoke(input=..., config=...)`
    (crewai/tools/tool_usage.py:622), whose `func` is the tool's `_run`: `run` is not on that path."""

    def invoke(self: Any, input: Any, config: Any = None, **kwargs: Any) -> Any:
        engine = state.engine()
        if not engine.live:
            return original(self, input, config, **kwargs)
        arguments = _describe.tool_arguments(input)
        if not isinstance(arguments, dict):  # CrewAI's own parser raises on it: as uninstrumented
            return original(self, input, config, **kwargs)
        if isinstance(getattr(self, "_original_tool", None), BaseAgentTool):
            agent_tool = self._original_tool
            return _handoff(
                engine, agent_tool, arguments, lambda handed: original(self, handed, config, **kwargs)
            )

        def body(edited: dict[str, Any]) -> Any:
            return original(self, edited, config, **kwargs)

        return _tool_node(engine, self, _describe.tool_input((), arguments), body, arguments)

    invoke.__wrapped__ = original  # type: ignore[attr-defined]
    return invoke
