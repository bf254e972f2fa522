"""Fails loudly when a Strands hook this adapter relies on moves (docs/strands.md has the table,
with the file:line each row was read at)."""

from __future__ import annotations

import inspect

from strands.agent.agent import Agent
from strands.event_loop import event_loop
from strands.hooks.registry import HookRegistry
from strands.middleware._registry import MiddlewareRegistry
from strands.multiagent import swarm
from strands.tools import decorator
from strands.tools.executors import _executor

from graphmind.adapter import Hook
from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported
from graphmind_strands import SUPPORTED
from graphmind_strands._hooks import HOOKS

STREAM_ASYNC, INVOKE, CALLBACKS = (row for _owner, row in HOOKS)


def test_the_installed_strands_is_in_the_supported_range_and_every_row_stands() -> None:
    assert_supported(SUPPORTED)
    for owner, row in HOOKS:
        assert isinstance(row, Hook)
        assert_hooks_stand((row,), owner)


def test_every_model_call_and_tool_execution_runs_through_the_middleware_registry() -> None:
    assert list(inspect.signature(MiddlewareRegistry.invoke).parameters) == [
        "self",
        "stage",
        "context",
        "terminal",
    ]
    assert_in_source(event_loop._handle_model_execution, "agent._middleware_registry.invoke(", hook=INVOKE)
    assert_in_source(event_loop._handle_model_execution, "InvokeModelStage,", hook=INVOKE)
    assert_in_source(_executor.ToolExecutor._stream, "agent._middleware_registry.invoke(", hook=INVOKE)
    assert_in_source(_executor.ToolExecutor._stream, "ExecuteToolStage,", hook=INVOKE)
    # a tool's exception becomes an error result carrying it (the node raises it at its error gate)
    assert_in_source(_executor._run_tool, "exception=error,", hook=INVOKE)
    assert_in_source(
        decorator.DecoratedFunctionTool.stream, 'f"Error: {error_type} - {error_msg}"', hook=INVOKE
    )


def test_invocations_and_a_swarms_nodes_are_announced_through_invoke_callbacks_async() -> None:
    assert_in_source(Agent._run_loop, "BeforeInvocationEvent(", hook=CALLBACKS)
    assert_in_source(Agent._run_loop, "AfterInvocationEvent(", hook=CALLBACKS)
    assert_in_source(Agent._run_loop, "self.hooks.invoke_callbacks_async(", hook=CALLBACKS)
    assert_in_source(
        swarm.Swarm._execute_swarm, "BeforeNodeCallEvent(self, current_node.node_id", hook=CALLBACKS
    )
    assert_in_source(swarm.Swarm._build_node_input, "self.state.handoff_message", hook=CALLBACKS)
    assert inspect.iscoroutinefunction(HookRegistry.invoke_callbacks_async)


def test_invoke_async_reads_stream_async_and_the_event_loop_wraps_errors() -> None:
    assert_in_source(Agent.invoke_async, "self.stream_async(", hook=STREAM_ASYNC)
    assert_in_source(event_loop.event_loop_cycle, "raise EventLoopException(e,", hook=STREAM_ASYNC)
