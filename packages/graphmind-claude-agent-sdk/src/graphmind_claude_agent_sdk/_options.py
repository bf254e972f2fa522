"""`instrument_claude_agent(options)`: the user's options with GraphMind's hooks and model gate merged in.

Nothing of the user's is replaced: their hooks stay (ours are added as matchers of their own, after
theirs), their `can_use_tool` stays, their env stays except `ANTHROPIC_BASE_URL`, which points at the
model gate (the URL it had, or the process's, or Anthropic's, is where the gate forwards).

Hook timeouts: the CLI gives up on a hook after its matcher's `timeout` (60 s when none is set:
claude_agent_sdk/types.py:893 HookMatcher.timeout, sent as the matcher's "timeout" at
types.py:2421). A person answering a held gate takes longer than that, so GraphMind's matchers ask
for `HOOK_TIMEOUT_S` (a day); the user's own matchers keep their timeouts. The CLI's model request
timeout is raised the same way (`API_TIMEOUT_MS`) unless the user set it: a held model turn must
not time out in the CLI.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Awaitable, Callable
from typing import Any

import graphmind

from . import _inproc, _model_gate, _tools
from ._session import SessionState

HOOK_TIMEOUT_S = 86_400.0
API_TIMEOUT_MS = str(int(HOOK_TIMEOUT_S * 1000))
DEFAULT_UPSTREAM = "https://api.anthropic.com"
MARK = "_graphmind_state"

Hook = Callable[[Any, str | None, Any], Awaitable[dict[str, Any]]]


def _hooks(state: SessionState) -> dict[str, Hook]:
    async def user_prompt_submit(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        state.remember_context()
        return {}

    async def pre(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return await _tools.pre_tool_use(state, data, tool_use_id)

    async def post(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return await _tools.post_tool_use(state, data, tool_use_id)

    async def failure(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return await _tools.post_tool_use_failure(state, data, tool_use_id)

    async def subagent_start(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if isinstance(data, dict) and isinstance(data.get("agent_id"), str):
            state.subagents[data["agent_id"]] = str(data.get("agent_type") or "subagent")
        return {}

    return {
        "UserPromptSubmit": user_prompt_submit,
        "PreToolUse": pre,
        "PostToolUse": post,
        "PostToolUseFailure": failure,
        "SubagentStart": subagent_start,
    }


def state_of(options: Any) -> SessionState | None:
    return getattr(options, MARK, None)


def instrument(options: Any, session: graphmind.Client | None) -> Any:
    """A copy of `options` with the hooks and the model gate (the same options when already instrumented)."""
    from claude_agent_sdk import HookMatcher

    if state_of(options) is not None:
        return options
    env = dict(options.env or {})
    upstream = env.get("ANTHROPIC_BASE_URL") or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM
    servers = options.mcp_servers if isinstance(options.mcp_servers, dict) else {}
    sdk_servers = {
        name: config
        for name, config in servers.items()
        if isinstance(config, dict) and config.get("type") == "sdk"
    }
    state = SessionState(
        session=session, upstream=upstream, sdk_servers=frozenset(sdk_servers), original=options
    )
    for config in sdk_servers.values():
        if config.get("instance") is not None:
            _inproc.register(config["instance"], state)
    env["ANTHROPIC_BASE_URL"] = _model_gate.register(state)
    if "API_TIMEOUT_MS" not in env and "API_TIMEOUT_MS" not in os.environ:
        env["API_TIMEOUT_MS"] = API_TIMEOUT_MS
    hooks: dict[Any, list[Any]] = {event: list(matchers) for event, matchers in (options.hooks or {}).items()}
    for event, callback in _hooks(state).items():
        callbacks: list[Any] = [callback]  # the SDK types each callback by its event's input TypedDict
        hooks.setdefault(event, []).append(HookMatcher(matcher=None, hooks=callbacks, timeout=HOOK_TIMEOUT_S))
    instrumented = dataclasses.replace(options, env=env, hooks=hooks)
    object.__setattr__(instrumented, MARK, state)
    return instrumented
