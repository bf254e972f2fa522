"""The tools that steer a held gate through the running hub.

`propose_answer` is always offered: it only shows the answer on the gate's card, for the person to
accept or reject with one click (nothing changes until they do). Under `--allow-control=auto` the
hub applies it at once (recorded as accepted by `auto`). `--allow-control` (or `=auto`) also
offers `answer_gate` and `set_breakpoints`, which act directly.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from ..export.jsonl import encode
from .hubapi import HubApi, HubUnreachable
from .registry import tool

STEERS = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
PROPOSES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
ACTIONS = ("continue", "retry", "inject", "abort", "simulate")
PROPOSALS = ("inject", "edit", "retry", "continue")


def result(status: int, body: Any) -> str:
    if status >= 400:
        message = body.get("error") if isinstance(body, dict) else None
        raise ToolError(f"the hub answered {status}: {message or body}")
    return encode(body)


def add_propose_tool(server: MCPServer, hub: HubApi, *, auto: bool) -> None:
    how = (
        "This server runs with --allow-control=auto: the proposal is APPLIED AT ONCE (recorded as accepted by auto)."
        if auto
        else "Nothing changes until the person clicks Accept on the gate's card in the viewer (or Reject)."
    )

    @tool(server, STEERS if auto else PROPOSES, how)
    def propose_answer(gate_id: str, action: str, why: str, value: Any = None) -> str:
        """Propose an answer for a held gate (gate_id from list_held_gates or explain_run): the viewer's
        card shows it with your reason `why` (one or two sentences for the person) and Accept / Reject.
        action: inject (the call returns `value`, any JSON, instead), edit (the call runs, or runs again,
        with `value` as its input), retry (run the call again: after and error gates, a loop hold),
        continue (let the call proceed). Returns the proposal (its id, status); the node keeps it,
        and who accepted or rejected it, in node_detail and the effects ledger."""
        if action not in PROPOSALS:
            raise ToolError(f"action must be one of {', '.join(PROPOSALS)} (got {action!r})")
        if action in ("inject", "edit") and value is None:
            raise ToolError(
                f"{action} needs a value: the JSON to {'return' if action == 'inject' else 'run with'}"
            )
        try:
            return result(*hub.propose(gate_id, action, value, value is not None, why, auto))
        except HubUnreachable as exc:
            raise ToolError(str(exc)) from None


def add_control_tools(server: MCPServer, hub: HubApi) -> None:
    @tool(server, STEERS)
    def answer_gate(
        gate_id: str, action: str, value: Any = None, input: Any = None, reload: bool = False
    ) -> str:
        """CHANGES WHAT THE AGENT DOES: answer a held gate (gate_id from list_held_gates). action:
        continue (let the call proceed), retry (run the call again; after and error gates, and a loop hold), inject
        (skip or replace the call's result with `value`, any JSON), abort (stop the whole run), simulate
        (at a safe-mode hold, reason effect: do not run the call; `value` optional, the simulated result).
        `input` (any JSON, where the gate says editable): with continue at a before gate the call runs
        with this input instead; with retry at an after or error gate it runs again with it.
        `reload` (where the gate says reloadable): re-import the tool's code from its file first.
        Returns once the agent confirmed; a refused edit holds the gate again with `refused` saying why."""
        if action not in ACTIONS:
            raise ToolError(f"action must be one of {', '.join(ACTIONS)} (got {action!r})")
        if action == "inject" and value is None:
            raise ToolError("inject needs a value: the JSON the call returns instead")
        edit: dict[str, Any] = {}
        if input is not None:
            edit["input"] = input
        if reload:
            edit["reload"] = True
        has_value = action == "inject" or (action == "simulate" and value is not None)
        try:
            return result(*hub.answer(gate_id, action, value, has_value, edit))
        except HubUnreachable as exc:
            raise ToolError(str(exc)) from None

    @tool(server, STEERS)
    def set_breakpoints(breakpoints: list[dict[str, str]]) -> str:
        """CHANGES WHAT THE AGENT DOES: replace the hub's breakpoints. Each is {"nodeId": "tool:search",
        "gate": "before" | "after" | "error"}; an agent reaching one holds there until answered (by the
        person in the viewer or answer_gate). Pass [] to clear them all. Returns the new debug state."""
        try:
            return result(*hub.set_debug({"breakpoints": json.loads(json.dumps(breakpoints))}))
        except HubUnreachable as exc:
            raise ToolError(str(exc)) from None
