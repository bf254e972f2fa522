"""Fails loudly when an ADK hook point this plugin relies on moves (docs/google-adk.md has the table)."""

from __future__ import annotations

import inspect

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.base_agent import BaseAgent
from google.adk.flows.llm_flows.core import _finalizer, _model_call
from google.adk.flows.llm_flows.tools import _caller, _error_handler
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.plugins.plugin_manager import PluginManager
from google.adk.runners import Runner
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from graphmind.adapter import Hook
from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported
from graphmind_google_adk import HOOKS, SUPPORTED, GraphmindPlugin

# Every callback the plugin overrides, with the keyword arguments ADK passes (base_plugin.py).
CALLBACKS = {
    "before_run_callback": ["invocation_context"],
    "after_run_callback": ["invocation_context"],
    "on_run_error_callback": ["invocation_context", "error"],
    "before_agent_callback": ["agent", "callback_context"],
    "after_agent_callback": ["agent", "callback_context"],
    "on_agent_error_callback": ["agent", "callback_context", "error"],
    "before_model_callback": ["callback_context", "llm_request"],
    "after_model_callback": ["callback_context", "llm_response"],
    "on_model_error_callback": ["callback_context", "llm_request", "error"],
    "before_tool_callback": ["tool", "tool_args", "tool_context"],
    "after_tool_callback": ["tool", "tool_args", "tool_context", "result"],
    "on_tool_error_callback": ["tool", "tool_args", "tool_context", "error"],
}


def test_the_installed_adk_is_in_the_supported_range() -> None:
    assert_supported(SUPPORTED)
    assert all(isinstance(row, Hook) for row in HOOKS)
    assert_hooks_stand(HOOKS, PluginManager())


@pytest.mark.parametrize("name", sorted(CALLBACKS))
def test_every_callback_the_plugin_overrides_is_a_base_plugin_callback_with_its_arguments(name: str) -> None:
    upstream = inspect.signature(getattr(BasePlugin, name))
    assert list(upstream.parameters)[1:] == CALLBACKS[name], f"BasePlugin.{name} changed (base_plugin.py)"
    ours = inspect.signature(getattr(GraphmindPlugin, name))
    assert list(ours.parameters)[1:] == CALLBACKS[name]
    assert name in vars(GraphmindPlugin)


def test_a_non_none_return_short_circuits_and_a_plugin_error_is_wrapped() -> None:
    assert_in_source(PluginManager._run_callbacks, "if result is not None:", "return result", hook=HOOKS[0])
    assert_in_source(PluginManager._run_callbacks, "raise RuntimeError(error_message) from e", hook=HOOKS[0])


def test_the_model_call_sites_call_the_plugin_callbacks() -> None:
    assert_in_source(_finalizer.handle_before_model_callback, "plugin_manager.run_before_model_callback(")
    assert_in_source(_finalizer.handle_after_model_callback, "plugin_manager.run_after_model_callback(")
    # continue at the error gate returns None: ADK raises the model's own exception object
    assert_in_source(
        _finalizer.run_and_handle_error, "plugin_manager.run_on_model_error_callback(", "raise model_error"
    )
    # a before-callback response is the step's reply and gets no after callback; every other response does
    source = assert_in_source(
        _model_call.call_llm_async, "_handle_before_model_callback(", "yield response\n      return"
    )
    assert "_handle_after_model_callback(" in source and "llm.generate_content_async(" in source


def test_the_tool_call_sites_call_the_plugin_callbacks_with_the_args_the_tool_gets() -> None:
    source = assert_in_source(
        _caller,
        "plugin_manager.run_before_tool_callback(\n            tool=tool, tool_args=function_args",
        "plugin_manager.run_after_tool_callback(",
        "raise tool_error",
        "args=prepared_call.function_args",  # the tool runs with the very dict the callbacks saw
    )
    assert "await tool.run_async(args=args, tool_context=tool_context)" in source  # what a retry calls
    assert_in_source(_error_handler, "plugin_manager.run_on_tool_error_callback(")


def test_what_the_plugin_reads_is_there() -> None:
    assert isinstance(inspect.getattr_static(LlmAgent, "canonical_model"), property)  # a retry's model
    assert isinstance(inspect.getattr_static(ToolContext, "function_call_id"), property)
    assert list(inspect.signature(BaseTool.run_async).parameters) == ["self", "args", "tool_context"]
    assert "parent_agent" in BaseAgent.model_fields
    assert_in_source(Runner.__init__, "self.plugin_manager = PluginManager(")  # instrument_runner's manager


def test_adk_web_extra_plugins_instantiates_the_class_with_a_name_keyword() -> None:
    from google.adk.cli.api_server import ApiServer  # what `adk web` serves with

    assert_in_source(ApiServer._instantiate_extra_plugins, "plugin_obj(name=qualified_name)")
    plugin = GraphmindPlugin(name="graphmind_google_adk.GraphmindPlugin")
    assert isinstance(plugin, BasePlugin) and plugin.name == "graphmind_google_adk.GraphmindPlugin"


def test_a_transfer_is_an_action_the_target_agents_start_reads() -> None:
    # _team.py: transfer_to_agent only sets the action (and its reason); the plugin reads it after the tool
    from google.adk.tools import agent_tool, transfer_to_agent_tool

    assert_in_source(
        transfer_to_agent_tool.transfer_to_agent,
        "tool_context.actions.transfer_to_agent = agent_name",
        "tool_context.actions.transfer_reason = transfer_reason or None",
    )
    # a plugin's Content from before_agent_callback is the agent's answer and ends the invocation
    assert_in_source(BaseAgent._handle_before_agent_callback, "end_invocation_on_content=True")
    assert_in_source(BaseAgent._handle_agent_callbacks, "author=self.name", "ctx.end_invocation = True")
    # an AgentTool's nested Runner inherits the caller's plugins: its invocation joins the caller's run
    assert_in_source(
        agent_tool.AgentTool.run_async,
        "tool_context._invocation_context.plugin_manager.plugins",
        "plugins=plugins",
    )
