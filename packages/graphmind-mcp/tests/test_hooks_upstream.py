"""Each row of the hook table against the installed mcp: fails loudly when a hooked method moves."""

from __future__ import annotations

import inspect

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
