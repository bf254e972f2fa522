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

from graphmind_llamaindex._hooks import LLM_HOOKS, TOOL_HOOKS
from graphmind_llamaindex._roles import ROWS, method_of


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
    assert f"self.{attr}(**chat_kwargs)" in inspect.getsource(getattr(FunctionCallingLLM, helper))


def test_function_agent_calls_tools_through_acall_and_turns_their_exceptions_into_results() -> None:
    source = inspect.getsource(BaseWorkflowAgent._call_tool)
    assert "await tool.acall(**tool_input)" in source
    assert (
        "except Exception" in source
    )  # why an abort at a tool reaches the agent only at its next gated LLM step


def test_handlers_run_inside_except_base_exception_and_spans_are_named_class_method_uuid() -> None:
    source = inspect.getsource(dispatcher.Dispatcher)
    assert "h.handle(event, **kwargs)" in source and "except BaseException:" in source
    assert 'id_ = f"{actual_class}.{method_name}-{uuid.uuid4()}"' in source
    assert method_of("FunctionAgent.run-354438a6-3822-46bb-94d9-362a8e24d1f5") == "run"


def test_a_streamed_chat_ends_with_an_end_event_that_carries_the_span_id() -> None:
    source = inspect.getsource(callbacks.llm_chat_callback)
    assert (
        "LLMChatInProgressEvent(" in source and "LLMChatEndEvent(" in source and "span_id=span_id" in source
    )


def test_workflow_steps_carry_their_step_config() -> None:
    assert hasattr(BaseWorkflowAgent.run_agent_step, "_step_config")
    assert hasattr(BaseWorkflowAgent.call_tool, "_step_config")


def test_a_workflow_keeps_its_timeout_in_timeout_and_a_plain_workflow_defaults_to_45_s() -> None:
    """_handler.timeout_of_span reads `_timeout` (workflows/workflow.py: `self._timeout = timeout`)."""
    from llama_index.core.agent.workflow import FunctionAgent
    from workflows import Workflow

    assert inspect.signature(Workflow.__init__).parameters["timeout"].default == 45.0
    assert "self._timeout = timeout" in inspect.getsource(Workflow.__init__)
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
