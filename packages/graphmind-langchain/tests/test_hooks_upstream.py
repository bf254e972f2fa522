"""Each row of `_hooks.py` against the installed langchain-core: fails loudly when a call site a hook
depends on moves (the rows' `upstream` say where)."""

from __future__ import annotations

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.tools import BaseTool

from graphmind.adapter import Hook
from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported
from graphmind_langchain import SUPPORTED, SUPPORTED_RANGE
from graphmind_langchain._hooks import MODEL_HOOKS, TOOL_HOOKS


def test_the_installed_langchain_core_is_in_the_supported_range() -> None:
    assert SUPPORTED_RANGE == SUPPORTED  # the earlier name, kept
    assert_supported(SUPPORTED)
    assert all(isinstance(row, Hook) for row in TOOL_HOOKS + MODEL_HOOKS)  # the one hook-row type
    assert_hooks_stand(TOOL_HOOKS, BaseTool)
    assert_hooks_stand(MODEL_HOOKS, BaseChatModel)


def test_tools_run_through_run_and_arun() -> None:
    run, arun = TOOL_HOOKS
    assert_in_source(BaseTool.run, "context.run(self._run, *tool_args, **tool_kwargs)", hook=run)
    assert_in_source(BaseTool.arun, "self._arun(*tool_args, **tool_kwargs)", hook=arun)


def test_chat_models_generate_and_stream_through_the_hooked_methods() -> None:
    generate, agenerate, stream, astream = MODEL_HOOKS
    assert_in_source(BaseChatModel.generate, "self._generate_with_cache(", hook=generate)
    assert_in_source(BaseChatModel.agenerate, "self._agenerate_with_cache(", hook=agenerate)
    assert_in_source(BaseChatModel.stream, "self._stream(input_messages, stop=stop, **kwargs)", hook=stream)
    assert_in_source(BaseChatModel.astream, "self._astream(", hook=astream)
    # stream() does not pass run_manager to _stream: the gated stream finds its node through a
    # context variable (_registry.last_model_offer)
    assert_in_source(
        BaseChatModel._generate_with_cache, "self._stream(messages, stop=stop, **kwargs)", hook=stream
    )
    # routing reads the class's _stream, so patching the instance never changes whether LangChain streams
    assert_in_source(BaseChatModel._should_stream, "type(self)._stream")


def test_langgraph_still_names_where_a_call_runs() -> None:
    # _team.py: the agent path is read from `langgraph_checkpoint_ns`; create_agent names its subgraph
    import warnings

    from langchain.agents import factory
    from langgraph.pregel import _algo

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.types import Command

    assert_in_source(_algo.prepare_single_task, '"langgraph_checkpoint_ns": task_checkpoint_ns')
    assert_in_source(factory, 'config["metadata"]["lc_agent_name"] = name')
    assert Command.PARENT == "__parent__" and {"goto", "graph"} <= set(Command.__dataclass_fields__)
