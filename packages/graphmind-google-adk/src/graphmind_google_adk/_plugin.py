"""GraphmindPlugin: every ADK model call and tool call as a GraphMind node whose gates hold.

Hook points: `BasePlugin`'s callbacks (google/adk/plugins/base_plugin.py, read in google-adk 2.13.0),
run by `PluginManager` for every agent of a runner, before the agents' own callbacks; a non-None
return short-circuits the call (plugin_manager.py:301-315), so "continue" always returns None.

| callback (base_plugin.py)            | called from                                       | node / gate                         |
|--------------------------------------|---------------------------------------------------|-------------------------------------|
| before_run_callback :136             | runners.py:1589                                   | the invocation is the run (an AgentTool's joins the caller's) |
| after_run_callback :174              | runners.py:1657                                   | run finished (open nodes cut short) |
| on_run_error_callback :403           | utils/_runner_utils.py:103                        | run error                           |
| before_agent_callback :198           | agents/base_agent.py:659                          | `agent:<name>`, nested by parent; after a transfer, its handoff gate (_team.py) |
| after_agent_callback :217            | agents/base_agent.py:679                          | agent finished                      |
| on_agent_error_callback :383         | agents/base_agent.py:702                          | agent error                         |
| before_model_callback :233           | flows/llm_flows/core/_finalizer.py:173            | `llm:step` before gate (inject = an `LlmResponse`) |
| after_model_callback :253            | _finalizer.py:295, per response (partials stream) | after gate (retry re-runs the model, inject) |
| on_model_error_callback :272         | _finalizer.py:366                                 | error gate (retry, inject; continue: ADK raises its own error) |
| before_tool_callback :297            | flows/llm_flows/tools/_caller.py:508, workflow/_tool_node.py:195 | `tool:<name>` before gate (inject = the result dict) |
| after_tool_callback :321             | _caller.py:601, _tool_node.py:237                 | after gate (retry re-runs the tool, inject); a transfer's target recorded |
| on_tool_error_callback :348          | tools/_error_handler.py:113, _tool_node.py:231    | error gate                          |
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

import graphmind
from graphmind.adapter import (
    Engine,
    NodeSpec,
    Owned,
    RunAborted,
    engine_for,
    framework_effect,
    owned_copy,
    thread_id,
)

from . import _gates as gates
from ._describe import (
    partial_text,
    plain,
    plain_usage,
    request_input,
    response_described,
    response_usage,
    to_response,
    to_tool_result,
)
from ._edit import lossless, model_edit, tool_edit
from ._hooks import instrument_plugin_manager
from ._invocations import Invocation
from ._team import Transfer, apply_handed, gate_transfer, path_of, scoped


def _model_result(response: LlmResponse) -> tuple[Any, dict[str, Any] | None]:
    output, owned = response_described(response)
    usage = response_usage(response)
    return Owned((output, usage)) if owned and plain_usage(usage) else (output, usage)


def _confirmation_effect(tool: Any) -> Any:
    """A tool that asks for confirmation (`FunctionTool(require_confirmation=True)` or a function
    deciding it, kept as `_require_confirmation`: google/adk/tools/function_tool.py:190, no public
    reader) changes something: a write (docs/effects.md). Else None: core's name rule decides."""
    needs = getattr(tool, "_require_confirmation", False)
    return framework_effect("write", "require_confirmation") if needs is True or callable(needs) else None


def _tool_result(result: Any) -> tuple[Any, dict[str, Any] | None]:
    output, owned = owned_copy(result)
    return Owned((output, None)) if owned else (plain(result), None)


class GraphmindPlugin(BasePlugin):
    """`Runner(..., plugins=[GraphmindPlugin()])`, or `adk web --extra_plugins graphmind_google_adk.GraphmindPlugin`.

    `session`: a `graphmind.Client` (default: `graphmind.get_client()`, looked up per invocation).
    With GraphMind disabled every callback returns None at once: ADK runs exactly as without it.
    """

    def __init__(self, session: graphmind.Client | None = None, *, name: str = "graphmind") -> None:
        super().__init__(name)
        self._session = session
        self._engine: Engine | None = engine_for(session) if session is not None else None
        self._invocations: dict[str, Invocation] = {}

    def _client(self) -> Engine:
        return self._engine or engine_for(None)

    def _fail_open(self, where: str, exc: Exception) -> None:
        self._client().warn(
            f"[graphmind] the Google ADK plugin failed in {where} ({type(exc).__name__}: {exc}); "
            "the call goes on unobserved (GRAPHMIND_DISABLED=1 turns GraphMind off)",
            key=f"adk-{where}",
        )

    # ---- the invocation is the run ------------------------------------------------------------
    async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        engine = self._client()
        if not engine.live:
            return None
        try:
            # From here on an abort leaves ADK's callbacks as RunAborted itself (_hooks.py).
            instrument_plugin_manager(invocation_context.plugin_manager, session=self._session)
            outer = self._agent_tool_call(invocation_context.agent)
            if outer is not None:  # an AgentTool's nested runner: its agent joins the caller's run
                caller, parent, base = outer
                self._invocations[invocation_context.invocation_id] = Invocation(
                    caller.run, False, root=invocation_context.agent, base=base, parent=parent
                )
                return None
            run = engine.current_run()
            owns = run is None
            if run is None:
                root = invocation_context.agent  # a workflow's root may be a node, not an agent (ADK 2)
                run = engine.begin_run(
                    f"adk:{getattr(root, 'name', None) or invocation_context.app_name}",
                    {
                        "framework": "google-adk",
                        "app": invocation_context.app_name,
                        "invocationId": invocation_context.invocation_id,
                    },
                    # The ADK session is the conversation (google/adk/agents/invocation_context.py:209
                    # `session`, its `id` the session_id the app passed to `Runner.run_async`).
                    thread=thread_id(getattr(getattr(invocation_context, "session", None), "id", None)),
                )
            self._invocations[invocation_context.invocation_id] = Invocation(
                run, owns, root=invocation_context.agent
            )
        except Exception as exc:
            self._fail_open("before_run_callback", exc)
        return None

    def _agent_tool_call(self, agent: Any) -> tuple[Invocation, str, tuple[str, ...]] | None:
        """The open `AgentTool` call that runs `agent` (its invocation, tool node, caller's path)."""
        for inv in self._invocations.values():
            for tool_agent, node, base in inv.agent_tools.values():
                if tool_agent is agent:
                    return inv, node, base
        return None

    def _end(self, invocation_context: InvocationContext, error: BaseException | None) -> None:
        inv = self._invocations.pop(invocation_context.invocation_id, None)
        if inv is None:
            return
        try:
            inv.close_open(error)
            if inv.owns_run:
                self._client().end_run(inv.run, error)
        except Exception as exc:
            self._fail_open("after_run_callback", exc)

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._end(invocation_context, None)

    async def on_run_error_callback(self, *, invocation_context: InvocationContext, error: Exception) -> None:
        self._end(invocation_context, error)

    def _invocation(self, invocation_id: str) -> Invocation | None:
        # `_client()` inlined: this runs at every callback of every call
        if not (self._engine or engine_for(None)).live:
            return None
        return self._invocations.get(invocation_id)

    # ---- agents: the nesting (workflow agents and sub-agents) ---------------------------------
    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        inv = self._invocation(callback_context.invocation_id)
        if inv is None:
            return None
        parent = agent.parent_agent
        try:
            path = inv.paths[agent.name] = path_of(agent, inv.root, inv.base)
            transfer = inv.transfers.pop(agent.name, None)
            if transfer is not None:  # the agent starts because another transferred to it
                answer = await gate_transfer(
                    self._client(), transfer, list(callback_context.session.events), inv
                )
                if answer is not None:
                    return answer  # answered as this agent: ADK yields it and the agent never runs
            kind = type(agent).__name__  # a class name: an exact str, no lone surrogate
            spec = NodeSpec(agent.name, "agent", {"agent": kind}, owned=True)
            parent_node = inv.parent_of(parent.name) if parent else None
            with scoped(path):
                ex = (self._engine or engine_for(None)).start_node(  # `_client()` inlined (per agent)
                    spec, run=inv.run, parent_instance_id=parent_node or inv.parent
                )
        except RunAborted:
            raise
        except Exception as exc:
            self._fail_open("before_agent_callback", exc)
            return None
        inv.agents[agent.name] = ex
        inv.agent_objects[agent.name] = agent
        return None

    async def after_agent_callback(self, *, agent: BaseAgent, callback_context: CallbackContext) -> None:
        inv = self._invocation(callback_context.invocation_id)
        ex = inv.agents.pop(agent.name, None) if inv is not None else None
        if ex is not None:
            ex.finish(None)
        return None

    async def on_agent_error_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext, error: Exception
    ) -> None:
        inv = self._invocation(callback_context.invocation_id)
        ex = inv.agents.pop(agent.name, None) if inv is not None else None
        if ex is not None:
            ex.fail(error)
        return None

    # ---- model calls ----------------------------------------------------------------------------
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        inv = self._invocation(callback_context.invocation_id)
        if inv is None:
            return None
        engine = self._engine or engine_for(None)  # `_client()` inlined (per model call)
        name = callback_context.agent_name
        agent = inv.agent_objects.get(name)
        handed = inv.handed.pop(name, None)
        if handed is not None:  # the conversation a person edited at the transfer to this agent
            apply_handed(llm_request, handed)

        async def rerun() -> LlmResponse:
            return await _call_model(agent, llm_request)

        try:
            described = request_input(llm_request, name)
            node_input, key, length = described
            with scoped(inv.path(name)):
                step = engine.next_llm_step(key, length, run=inv.run)  # each agent's steps: their own
                spec = NodeSpec(
                    "step",
                    "llm",
                    node_input,
                    node_id="llm:step",
                    instance_id=step.instance_id,
                    attrs={"agent": name, "model": llm_request.model},  # owned with the input (request_input)
                    tool_calls_in_output=True,
                    owned=type(described) is Owned,
                    edit=model_edit(llm_request, rerun) if lossless(llm_request) else None,
                )
                ex = await engine.astart_node(spec, run=inv.run, parent_instance_id=inv.parent_of(name))
            if step.first_step and node_input.get("tools"):
                roster = [{"nodeId": f"tool:{t}", "kind": "tool", "name": t} for t in node_input["tools"]]
                engine.hint(roster, ex.parent_instance_id, run=ex.run)
        except RunAborted:
            raise
        except Exception as exc:
            self._fail_open("before_model_callback", exc)
            return None
        injected: LlmResponse | None = await _opened(
            gates.Call(ex, _model_result, to_response, rerun), inv.models, name
        )
        return injected

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        inv = self._invocation(callback_context.invocation_id)
        if inv is None:
            return None
        name = callback_context.agent_name
        call = inv.models.get(name)
        if call is None:
            return None
        if llm_response.partial:  # SSE streaming: a delta, then the whole response (base_llm_flow)
            text = partial_text(llm_response)
            if text:
                call.ex.token(text)
            return None
        del inv.models[name]
        result: LlmResponse | None = await gates.after(call, llm_response)
        return result

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        inv = self._invocation(callback_context.invocation_id)
        call = inv.models.pop(callback_context.agent_name, None) if inv is not None else None
        if call is None:
            return None
        result: LlmResponse | None = await gates.error(call, error)
        return result

    # ---- tool calls -----------------------------------------------------------------------------
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        inv = self._invocation(tool_context.invocation_id)
        if inv is None:
            return None
        call_id = tool_context.function_call_id

        async def rerun() -> Any:
            return await tool.run_async(args=tool_args, tool_context=tool_context)

        try:
            node_input, owned = owned_copy(tool_args)
            if not owned:
                node_input = plain(tool_args)  # the JSON round trip (_describe.plain_owned)
            func = getattr(tool, "func", None)  # a FunctionTool's (google/adk/tools/function_tool.py:186)
            spec = NodeSpec(
                tool.name,
                "tool",
                node_input,
                instance_id=call_id,
                owned=owned,
                edit=tool_edit(tool_args, rerun),
                # reload: core puts the new code into this function, which the tool calls
                function=func if inspect.isfunction(func) or inspect.ismethod(func) else None,
                effects=_confirmation_effect(tool),
            )
            agent = tool_context.agent_name
            with scoped(inv.path(agent)):
                ex = await (self._engine or engine_for(None)).astart_node(  # `_client()` inlined
                    spec, run=inv.run, parent_instance_id=inv.parent_of(agent)
                )
        except RunAborted:
            raise
        except Exception as exc:
            self._fail_open("before_tool_callback", exc)
            return None
        if isinstance(tool, AgentTool) and call_id is not None:  # its nested invocation joins this run
            inv.agent_tools[call_id] = (tool.agent, ex.instance_id, inv.path(agent))
        call = gates.Call(ex, _tool_result, to_tool_result, rerun)
        injected: dict[str, Any] | None = await _opened(call, inv.tools, ex.instance_id)
        if injected is not None and call_id is not None:
            inv.agent_tools.pop(call_id, None)
        return injected

    def _tool_call(self, tool_context: ToolContext) -> gates.Call | None:
        inv = self._invocation(tool_context.invocation_id)
        call_id = tool_context.function_call_id
        if inv is None or call_id is None:
            return None
        inv.agent_tools.pop(call_id, None)
        actions = tool_context.actions
        target = actions.transfer_to_agent
        if isinstance(target, str) and target:  # transfer_to_agent ran: the target's start is a handoff
            inv.transfers[target] = Transfer(tool_context.agent_name, target, actions.transfer_reason)
        return inv.tools.pop(call_id, None)

    async def after_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, result: dict[str, Any]
    ) -> dict[str, Any] | None:
        call = self._tool_call(tool_context)
        if call is None:
            return None
        replaced: Any = await gates.after(call, result)
        return None if replaced is None else to_tool_result(replaced)

    async def on_tool_error_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, error: Exception
    ) -> dict[str, Any] | None:
        call = self._tool_call(tool_context)
        if call is None:
            return None
        if isinstance(error, asyncio.CancelledError):  # never recovered (base_plugin.py:356-362)
            call.ex.fail(error)
            return None
        replaced: Any = await gates.error(call, error)
        return None if replaced is None else to_tool_result(replaced)


async def _opened(call: gates.Call, open_calls: dict[str, gates.Call], key: str) -> Any:
    """The one tail of both before callbacks (model and tool): the before gate when one can matter
    (`gates.opened`); an injected value ends the call there, else it stays open under `key` for its
    after or error callback."""
    injected = await gates.opened(call)
    if injected is None:
        open_calls[key] = call
    return injected


async def _call_model(agent: Any, llm_request: LlmRequest) -> LlmResponse:
    """The model call again, for a retry: the agent's own model (`LlmAgent.canonical_model`, what
    flows/llm_flows/core/_model_call.py `_get_llm` resolves) with the same request, unstreamed; its
    last response is the whole reply."""
    if agent is None:
        raise RuntimeError("graphmind: the agent of this model call is unknown, so it cannot be retried")
    llm = agent.canonical_model
    last: LlmResponse | None = None
    async for response in llm.generate_content_async(llm_request, stream=False):
        last = response
    if last is None:
        raise RuntimeError("graphmind: the model's retry returned no response")
    return last
