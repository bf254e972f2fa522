"""Every upstream fact this adapter depends on, read against the installed llama-index-core: a
LlamaIndex release that moves a hook fails here, loudly, before it breaks a user's agent."""

from __future__ import annotations

import inspect

import pytest
from llama_index.core.agent.workflow.base_agent import BaseWorkflowAgent
from llama_index.core.llms import callbacks
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.tools import FunctionTool
from llama_index.core.tools.types import AsyncBaseTool
from llama_index_instrumentation import dispatcher

from graphmind.adapter import Hook
from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported
from graphmind_llamaindex import SUPPORTED
from graphmind_llamaindex._hooks import LLM_HOOKS, TOOL_HOOKS
from graphmind_llamaindex._roles import ROWS, method_of


def test_the_installed_llama_index_core_is_in_the_supported_range() -> None:
    assert_supported(SUPPORTED)
    assert all(isinstance(row, Hook) for row in TOOL_HOOKS + LLM_HOOKS)  # the one hook-row type
    assert_hooks_stand(TOOL_HOOKS, AsyncBaseTool)
    assert_hooks_stand(LLM_HOOKS, FunctionCallingLLM)


@pytest.mark.parametrize("hook", TOOL_HOOKS, ids=lambda h: h.attr)
def test_each_tool_hook_is_a_method_of_llamaindex_tools(hook: object) -> None:
    attr = hook.attr  # type: ignore[attr-defined]
    assert callable(getattr(FunctionTool, attr)) and callable(getattr(AsyncBaseTool, attr))


@pytest.mark.parametrize("hook", LLM_HOOKS, ids=lambda h: h.attr)
def test_each_llm_hook_is_what_the_with_tools_helpers_call(hook: object) -> None:
    attr = hook.attr  # type: ignore[attr-defined]
    assert callable(getattr(FunctionCallingLLM, attr))
    helper = {
        "chat": "chat_with_tools",
        "achat": "achat_with_tools",
        "stream_chat": "stream_chat_with_tools",
        "astream_chat": "astream_chat_with_tools",
    }[attr]
    assert_in_source(getattr(FunctionCallingLLM, helper), f"self.{attr}(**chat_kwargs)", hook=hook)  # type: ignore[arg-type]


def test_function_agent_calls_tools_through_acall_and_turns_their_exceptions_into_results() -> None:
    # "except Exception": why an abort at a tool reaches the agent only at its next gated LLM step
    assert_in_source(
        BaseWorkflowAgent._call_tool, "await tool.acall(**tool_input)", "except Exception", hook=TOOL_HOOKS[1]
    )


def test_handlers_run_inside_except_base_exception_and_spans_are_named_class_method_uuid() -> None:
    assert_in_source(
        dispatcher.Dispatcher,
        "h.handle(event, **kwargs)",
        "except BaseException:",
        'id_ = f"{actual_class}.{method_name}-{uuid.uuid4()}"',
    )
    assert method_of("FunctionAgent.run-354438a6-3822-46bb-94d9-362a8e24d1f5") == "run"


def test_a_streamed_chat_ends_with_an_end_event_that_carries_the_span_id() -> None:
    assert_in_source(
        callbacks.llm_chat_callback, "LLMChatInProgressEvent(", "LLMChatEndEvent(", "span_id=span_id"
    )


def test_workflow_steps_carry_their_step_config() -> None:
    assert hasattr(BaseWorkflowAgent.run_agent_step, "_step_config")
    assert hasattr(BaseWorkflowAgent.call_tool, "_step_config")


def test_a_workflow_keeps_its_timeout_in_timeout_and_a_plain_workflow_defaults_to_45_s() -> None:
    """_handler.timeout_of_span reads `_timeout` (workflows/workflow.py: `self._timeout = timeout`)."""
    from llama_index.core.agent.workflow import FunctionAgent
    from workflows import Workflow

    assert inspect.signature(Workflow.__init__).parameters["timeout"].default == 45.0
    assert_in_source(Workflow.__init__, "self._timeout = timeout")
    from graphmind_llamaindex.testing import ScriptedFunctionCallingLLM

    llm = ScriptedFunctionCallingLLM([])
    assert FunctionAgent(tools=[], llm=llm, timeout=3)._timeout == 3
    assert FunctionAgent(tools=[], llm=llm)._timeout is None


def test_every_role_row_names_methods_that_exist() -> None:
    concrete = {"BaseTool": AsyncBaseTool}  # BaseTool declares `call`; its async subclass adds `acall`
    for base, methods, _ in ROWS:
        owner = concrete.get(base.__name__, base)
        for method in methods or ():
            assert callable(getattr(owner, method, None)), f"{owner.__name__}.{method} is gone"


def test_an_agent_workflow_still_names_the_agent_of_each_step() -> None:
    # _team.py: the agent of a step is its event's current_agent_name; a handoff is the `handoff` tool
    from llama_index.core.agent.workflow import AgentInput, AgentOutput, AgentSetup, multi_agent_workflow

    for event in (AgentInput, AgentSetup, AgentOutput):
        assert "current_agent_name" in event.model_fields, event
    assert_in_source(multi_agent_workflow.handoff, 'await ctx.store.set("next_agent", to_agent)')
    assert_in_source(multi_agent_workflow.AgentWorkflow, "self.root_agent = root_agent")
    assert_in_source(
        multi_agent_workflow.AgentWorkflow.aggregate_tool_results,
        'await ctx.store.set("current_agent_name", next_agent_name)',
    )
