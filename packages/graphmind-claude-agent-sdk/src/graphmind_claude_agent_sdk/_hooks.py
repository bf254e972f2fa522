"""The hook points, as data.

Two kinds of hook: the process-wide rows below (`graphmind.adapter.Hook`, applied and undone by one
`ProcessPatch`), and the CLI's own hook events, which the instrumented options register as matchers
(`_options.py`; the table `CLI_HOOKS` says what each is used for). A version change of the SDK is
one row here; `tests/test_hooks_upstream.py` fails loudly when a hook moves.
"""

from __future__ import annotations

from graphmind.adapter import Hook, Patches, ProcessPatch

from . import _inproc, _runs
from ._version import SUPPORTED

# Rows on classes (process-wide): the bridge row gates in-process tools of instrumented options only.
BRIDGE_HOOKS: tuple[Hook[Patches], ...] = (
    Hook(
        "",
        "handle",
        _inproc.wrap_handle,
        SUPPORTED,
        "claude_agent_sdk/_internal/sdk_mcp_bridge.py:352 SdkMcpBridge.handle "
        "(called from _internal/query.py:722 _handle_sdk_mcp_request)",
    ),
)
RUN_HOOKS: tuple[Hook[Patches], ...] = (
    Hook(
        "",
        "process_query",
        _runs.wrap_process_query,
        SUPPORTED,
        "claude_agent_sdk/_internal/client.py:34 InternalClient.process_query (query.py:129 query)",
    ),
    Hook(
        "", "connect", _runs.wrap_connect, SUPPORTED, "claude_agent_sdk/client.py:93 ClaudeSDKClient.connect"
    ),
    Hook(
        "",
        "disconnect",
        _runs.wrap_disconnect,
        SUPPORTED,
        "claude_agent_sdk/client.py:607 ClaudeSDKClient.disconnect",
    ),
)

# The CLI's hook events the instrumented options register (claude_agent_sdk/types.py:324 HookEvent),
# with what each is for: (event, upstream input type, use).
CLI_HOOKS: tuple[tuple[str, str, str], ...] = (
    ("UserPromptSubmit", "types.py:BaseHookInput", "the session's context, for the model gate's turns"),
    (
        "PreToolUse",
        "types.py:399 PreToolUseHookInput",
        "a CLI tool's node and before gate (updatedInput, deny)",
    ),
    ("PostToolUse", "types.py:407 PostToolUseHookInput", "the after gate (updatedToolOutput)"),
    ("PostToolUseFailure", "types.py:410 PostToolUseFailureHookInput", "the error gate"),
    ("SubagentStart", "types.py SubagentStartHookInput", "the subagents of the session"),
)


def process_patch() -> ProcessPatch:
    """Every row on its class. The rows act on instrumented options only, or on every session once
    `instrument_claude_agent_sdk()` turned the process-wide form on (`_runs.SessionRuns`)."""
    from claude_agent_sdk import ClaudeSDKClient
    from claude_agent_sdk._internal.client import InternalClient
    from claude_agent_sdk._internal.sdk_mcp_bridge import SdkMcpBridge

    targets = (SdkMcpBridge, InternalClient, ClaudeSDKClient, ClaudeSDKClient)
    return ProcessPatch(zip(targets, (*BRIDGE_HOOKS, *RUN_HOOKS), strict=True))
