"""Each row of the hook table against the installed mcp: fails loudly when a hooked method moves."""

from __future__ import annotations

import inspect

import pytest
from mcp import ClientSession

from graphmind.adapter import Hook
from graphmind.testing import assert_hooks_stand, assert_supported
from graphmind_mcp import SUPPORTED
from graphmind_mcp._hooks import HOOKS


def test_the_installed_mcp_is_in_the_supported_range() -> None:
    assert_supported(SUPPORTED)
    assert all(isinstance(row, Hook) for row in HOOKS)  # the one hook-row type
    assert_hooks_stand(HOOKS, ClientSession)


def test_every_hooked_method_is_an_async_method_of_client_session_with_the_signature_the_wrapper_expects() -> (
    None
):
    for hook in HOOKS:
        method = getattr(ClientSession, hook.attr)
        assert inspect.iscoroutinefunction(method), hook
        params = list(inspect.signature(method).parameters)
        assert params[:3] == ["self", "name", "arguments"], (hook, params)


def test_the_inject_check_and_the_server_name_are_public_client_session_api() -> None:
    assert inspect.iscoroutinefunction(ClientSession.validate_tool_result)
    assert list(inspect.signature(ClientSession.validate_tool_result).parameters) == [
        "self",
        "name",
        "result",
    ]
    assert isinstance(inspect.getattr_static(ClientSession, "server_info"), property)


def test_the_client_hook_is_the_app_level_call_that_drives_the_input_required_rounds() -> None:
    """`Client.call_tool` re-sends through `ClientSession.call_tool` once per `InputRequiredResult`
    round (graphmind_mcp/_rounds.py); the rounds' re-send names `request_state` / `input_responses`."""
    from mcp.client import Client

    from graphmind_mcp._hooks import CLIENT_HOOKS

    driver = pytest.importorskip("mcp.client._input_required")  # SEP-2322 rounds: mcp 2.3 and later
    run_input_required_driver = driver.run_input_required_driver

    assert all(isinstance(row, Hook) for row in CLIENT_HOOKS)  # the one hook-row type
    assert_hooks_stand(CLIENT_HOOKS, Client)
    for hook in CLIENT_HOOKS:
        method = getattr(Client, hook.attr)
        assert inspect.iscoroutinefunction(method), hook
        assert list(inspect.signature(method).parameters)[:3] == ["self", "name", "arguments"]
    assert "_drive_input_required" in inspect.getsource(Client.call_tool)
    assert "retry(responses, current.request_state)" in inspect.getsource(run_input_required_driver)
    session_params = inspect.signature(ClientSession.call_tool).parameters
    assert {"request_state", "input_responses", "allow_input_required"} <= set(session_params)


def test_the_listing_hook_reads_the_tools_annotations() -> None:
    """`ClientSession.list_tools` returns Tool objects with `annotations` (readOnlyHint,
    destructiveHint): each tool's effect class (docs/effects.md)."""
    from mcp.types import Tool

    from graphmind_mcp._hooks import LIST_HOOKS

    assert_hooks_stand(LIST_HOOKS, ClientSession)
    assert inspect.iscoroutinefunction(ClientSession.list_tools)
    assert "annotations" in Tool.model_fields
