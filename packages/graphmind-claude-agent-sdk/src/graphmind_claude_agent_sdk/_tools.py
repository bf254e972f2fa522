"""The tool calls the CLI makes itself (Bash, Read, Write, Edit, WebFetch, MCP tools of servers the CLI
runs): one gated `tool:<name>` node per call, opened by the PreToolUse hook and finished by the
PostToolUse or PostToolUseFailure hook, with the tool-use id as its instance id.

What a gate's answer can do is what the CLI's hook protocol lets a hook do
(claude_agent_sdk/types.py:551 PreToolUseHookSpecificOutput, :561 PostToolUseHookSpecificOutput):

- before, continue: `{}` (the user's permission settings decide as without GraphMind); with an edited
  input: `updatedInput` (the CLI runs the edited call).
- before, inject: the call is denied with the injected text as the denial's reason, so the CLI never
  runs the tool; the model gate then puts that text into the tool_result the CLI sends as an
  ordinary (not error-flagged) result, so the model reads exactly the injected value
  (`model_text`; docs/claude-agent-sdk.md).
- after, inject: `updatedToolOutput` replaces the result the model sees (for built-in tools the CLI
  keeps its own result when the value does not match the tool's output shape).
- retry is not offered for these tools: the CLI ran the call; Python cannot run it again.
- abort: `continue: false` stops the session; the run ends aborted.
"""

from __future__ import annotations

import json
from typing import Any

from graphmind import protocol as proto
from graphmind.adapter import Effect, NodeExecution, NodeSpec, RunAborted, engine_for, framework_effect

from ._describe import tool_output
from ._session import SessionState

# The effect class of the CLI's own tools (docs/effects.md): what each can change on the machine.
WRITE_TOOLS = frozenset({"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "WebSearch", "TodoRead"})

_ABORT_REASON = "Run aborted from the GraphMind debugger"


class ToolHookError(Exception):
    """A CLI tool's failure as PostToolUseFailure reported it (its error text)."""


def _edit(value: Any) -> Any:
    if not isinstance(value, dict):
        raise ValueError("a tool's input is a JSON object of its arguments")
    return _EditedInput(value)


class _EditedInput:
    """The body an edit decided: the CLI runs the call with `value` (`updatedInput`)."""

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value

    def __call__(self) -> Any:  # never run in Python: the CLI runs the tool
        raise RuntimeError("a CLI tool runs in the CLI")


def model_text(raw: Any) -> str:
    """What the model reads for an injected (or replayed) CLI tool result: a string as it is; a Bash
    result (`{"stdout", "stderr", ...}`, the shape its node records) as the CLI shows it to the model
    (stdout, then stderr); an object with a text `content` as that text; anything else as JSON."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict):
        if isinstance(raw.get("stdout"), str):
            stderr = raw.get("stderr")
            return str(raw["stdout"]) + (f"\n{stderr}" if isinstance(stderr, str) and stderr else "")
        if isinstance(raw.get("content"), str):
            return str(raw["content"])
    return json.dumps(raw, ensure_ascii=False)


def _abort(event: str = "PreToolUse") -> dict[str, Any]:
    """Stops the session (`continue: false`); before a call, also denies it: the call never runs."""
    output: dict[str, Any] = {"continue_": False, "stopReason": _ABORT_REASON, "suppressOutput": True}
    if event == "PreToolUse":
        output["hookSpecificOutput"] = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": _ABORT_REASON,
        }
    return output


def effect_of(name: str) -> Effect | None:
    """The CLI's own tools' effect classes (docs/effects.md); other tools go by the name rule."""
    if name in WRITE_TOOLS:
        return framework_effect("write", "Claude Code tool")
    if name in READ_TOOLS:
        return framework_effect("read", "Claude Code tool")
    return None


def _spec(name: str, tool_input: Any, tool_use_id: str | None) -> NodeSpec:
    return NodeSpec(
        name=name,
        kind="tool",
        input=tool_input,
        instance_id=tool_use_id or None,
        edit=_edit,
        attrs={"framework": "claude-agent-sdk", "runsIn": "cli"},
        effects=effect_of(name),
    )


async def pre_tool_use(state: SessionState, data: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
    """PreToolUse: open the node, hold at its before gate when asked; the hook's answer to the CLI."""
    state.remember_context()
    name = str(data.get("tool_name") or "tool")
    if state.in_process(name):  # gated where its handler runs (_inproc.py): one node, not two
        return {}
    engine = engine_for(state.session)
    if not engine.live:
        return {}
    tool_input = data.get("tool_input")
    try:
        ex = await engine.astart_node(_spec(name, tool_input, tool_use_id))
    except RunAborted as exc:
        state.note_fatal(exc)
        return _abort()
    return await _before(state, ex, tool_use_id)


async def _before(state: SessionState, ex: NodeExecution, tool_use_id: str | None) -> dict[str, Any]:
    if not (ex.may_hold() or ex.host.replay is not None):
        _keep(state, ex, tool_use_id)
        return {}
    try:
        answer = await ex.abefore()
    except RunAborted as exc:
        state.note_fatal(exc)
        ex.fail(exc)
        return _abort()
    if answer.injects:
        ex.finish(answer.raw)
        text = model_text(answer.raw)
        if tool_use_id:
            state.injected_results[tool_use_id] = text
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": text,
            }
        }
    _keep(state, ex, tool_use_id)
    if isinstance(answer.body, _EditedInput):
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": answer.body.value}}
    return {}


def _keep(state: SessionState, ex: NodeExecution, tool_use_id: str | None) -> None:
    state.open_tools[tool_use_id or ex.instance_id] = ex


async def post_tool_use(state: SessionState, data: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
    """PostToolUse: the after gate on the CLI's result, then the node ends."""
    ex = state.open_tools.pop(tool_use_id or "", None)
    if ex is None:
        return {}
    output = tool_output(data.get("tool_response"))
    if ex.gate_needed(proto.AFTER):
        try:
            answer = await ex.aafter(output)
        except RunAborted as exc:
            state.note_fatal(exc)
            ex.fail(exc)
            return _abort("PostToolUse")
        if answer.injects:
            ex.finish(answer.raw)
            return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": answer.raw}}
        if answer.retries:
            ex.warn(f"[graphmind] {ex.node_id}: the CLI ran this call; retry is not possible from Python")
    ex.finish(output)
    return {}


async def post_tool_use_failure(
    state: SessionState, data: dict[str, Any], tool_use_id: str | None
) -> dict[str, Any]:
    """PostToolUseFailure: the error gate (continue or abort: the CLI already told the model)."""
    ex = state.open_tools.pop(tool_use_id or "", None)
    if ex is None:
        return {}
    error = ToolHookError(str(data.get("error") or "the tool failed"))
    if ex.gate_needed(proto.ERROR_GATE):
        try:
            await ex.aerror(error)
        except RunAborted as exc:
            state.note_fatal(exc)
            ex.fail(exc)
            return _abort("PostToolUseFailure")
    ex.fail(error)
    return {}
