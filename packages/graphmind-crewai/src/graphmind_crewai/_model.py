"""Each model call of an agent: one gated `llm:step` node, on `get_llm_response`.

Every step of a crew's agent asks its LLM through one function,
`crewai.utilities.agent_utils.get_llm_response` (agent_utils.py:656), looked up in the namespaces of
the two executors that import it: `AgentExecutor` (crewai/agents/agent_executor.py:99, called at
:1639 for text tool calling and :1729 for native function calling) and `LiteAgent`
(crewai/lite_agent.py:83, called at :943). Why there and not in CrewAI's `before_llm_call` hook
(crewai/hooks/llm_hooks.py:229) or in `LLM.call`:

- the hook can only block a call (`return False` raises `LLMCallBlockedError`, agent_utils.py:496)
  and replace the reply's text afterwards: the step still fails or still reaches the provider, so
  an inject there is not one;
- `LLM.call` is each provider class's own method (OpenAI, Anthropic, Gemini, Bedrock, Azure,
  LiteLLM and a user's `BaseLLM` subclass each override it): one row per class, and none names the
  agent;
- `get_llm_response` is the deepest point that every provider's step passes, that names the agent
  and task, and whose result is CrewAI's own step answer (the reply's text, or the native tool
  calls): an inject returns that answer with no request at all, and the executor goes on with it as
  with a real one. CrewAI's own before/after model hooks run inside it, so they run on a live call
  and not on an injected one (the call did not happen).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from graphmind.adapter import NodeSpec, Patches

from . import _agents, _carry, _describe, _edit, _inject


def _bound(signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    if not args:
        return kwargs  # CrewAI passes every argument by keyword
    bound = signature.bind_partial(*args, **kwargs)
    return dict(bound.arguments)


def wrap_get_llm_response(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    signature = inspect.signature(original)

    def get_llm_response(*args: Any, **kwargs: Any) -> Any:
        engine = state.engine()  # per call: graphmind.configure() may replace the default client
        if not engine.live:
            return original(*args, **kwargs)
        bound = _bound(signature, args, kwargs)
        llm = bound.get("llm")
        agent = bound.get("from_agent")
        executor = bound.get("executor_context")
        # What CrewAI sends: the executor's own list when it has one (agent_utils.py:498), else the argument.
        agent_messages = getattr(executor, "messages", None) if executor is not None else None
        sent = agent_messages if isinstance(agent_messages, list) else bound.get("messages")
        node_input = _describe.model_input(sent, bound.get("tools"))
        shown = node_input["messages"]
        key = f"{shown[0]['role']}:{str(shown[0]['content'] or '')[:2000]}" if shown else ""
        run, parent = _carry.place(engine, getattr(agent, "crew", None))
        step = (
            run.steps.next_step(key, len(shown)) if run is not None else engine.next_llm_step(key, len(shown))
        )
        model = getattr(llm, "model", None)
        spec = NodeSpec(
            "step",
            "llm",
            node_input,
            node_id="llm:step",
            instance_id=step.instance_id,
            # attrs.model: where the hub reads a model step's model to price it (docs/protocol.md)
            attrs={
                "framework": "crewai",
                "model": model if isinstance(model, str) and model else type(llm).__name__,
                "agent": _describe.agent_name(agent),
            },
            tool_calls_in_output=True,
        )

        def call() -> Any:
            return original(*args, **kwargs)

        spec.edit = _edit.model_edit(agent_messages if isinstance(agent_messages, list) else None, call)
        with _agents.scope(agent):
            ex = engine.start_node(spec, run=run, parent_instance_id=parent)
            return ex.run_sync(call, _describe.model_output, _inject.model_answer, None, None)

    get_llm_response.__wrapped__ = original  # type: ignore[attr-defined]
    return get_llm_response
