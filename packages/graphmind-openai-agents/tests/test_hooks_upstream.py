"""Fails loudly when an Agents SDK hook this adapter relies on moves (docs/openai-agents.md has the table)."""

from __future__ import annotations

import agents.run
import agents.run_internal.guardrails
import agents.run_internal.run_loop
import agents.run_internal.tool_execution
import agents.run_internal.turn_resolution
import agents.tool
from agents.models.interface import Model

from graphmind.adapter import Hook
from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported
from graphmind_openai_agents import SUPPORTED
from graphmind_openai_agents._hooks import HOOKS, MODEL_HOOKS


def test_the_installed_sdk_is_in_the_supported_range_and_every_row_stands() -> None:
    assert_supported(SUPPORTED)
    for owner, row in HOOKS:
        assert isinstance(row, Hook)  # the one hook-row type
        assert_hooks_stand([row], owner)
    assert_hooks_stand(MODEL_HOOKS, Model)


def test_each_turn_asks_get_model_and_calls_the_models_two_methods() -> None:
    row = HOOKS[0][1]
    assert_in_source(
        agents.run_internal.run_loop.get_new_response,
        "model = get_model(execution_agent, run_config)",
        "model.get_response(",
        hook=row,
    )
    assert "get_model" in vars(agents.run_internal.run_loop)  # looked up in the module at call time
    assert_in_source(
        agents.run_internal.run_loop.run_single_turn_streamed,
        "model = get_model(execution_agent, run_config)",
        "model.stream_response(",
        hook=row,
    )


def test_every_function_tool_is_invoked_through_the_module_function() -> None:
    row = HOOKS[1][1]
    assert_in_source(
        agents.run_internal.tool_execution._FunctionToolBatchExecutor._invoke_tool_and_run_post_invoke,
        "await _invoke_function_tool_with_metadata(",
        hook=row,
    )
    assert_in_source(
        agents.tool._invoke_function_tool_with_metadata, "function_tool.on_invoke_tool(", hook=row
    )
    assert hasattr(agents.tool, "_FunctionToolInvocationResult")


def test_a_function_tools_invoker_catches_in_call_and_hands_the_sdks_failure_handler() -> None:
    row = HOOKS[2][1]
    assert_in_source(
        agents.tool._FailureHandlingFunctionToolInvoker.__call__,
        "return await self._invoke_tool_impl(ctx, input)",
        "maybe_invoke_function_tool_failure_error_function(",
        hook=row,
    )


def test_handoffs_and_guardrails_are_looked_up_at_call_time() -> None:
    assert_in_source(
        agents.run_internal.turn_resolution.execute_tools_and_side_effects,
        "execute_handoffs_call = execute_handoffs",
        hook=HOOKS[3][1],
    )
    assert_in_source(agents.run_internal.turn_resolution.execute_handoffs, "handoff.on_invoke_handoff(")
    assert_in_source(agents.run_internal.guardrails.run_input_guardrails, "run_single_input_guardrail(")
    assert_in_source(agents.run_internal.guardrails.run_output_guardrails, "run_single_output_guardrail(")


def test_run_sync_and_run_streamed_pass_the_two_run_rows() -> None:
    assert_in_source(agents.run.AgentRunner._run_sync_impl, "self.run(", hook=HOOKS[6][1])
    assert_in_source(agents.run.AgentRunner.run_streamed, "await start_streaming(", hook=HOOKS[7][1])


def test_a_tools_error_reaches_the_app_as_the_sdks_user_error() -> None:
    # documented in docs/openai-agents.md; the run row takes a RunAborted out of it
    assert_in_source(
        agents.run_internal.tool_execution._FunctionToolBatchExecutor,
        'raise UserError(f"Error running tool {func_tool.name}: {e}") from e',
    )
