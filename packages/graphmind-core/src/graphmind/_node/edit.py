"""Edit and reload at a held gate (docs/protocol.md, "Editing a held call"), decided here once for
every adapter: whether a gate takes an edited input, what `exec.paused` says about it, turning an
answer's `input` / `reload` into the body to run, and the record of each attempt.

An adapter only says how its call is rebuilt from edited JSON (`NodeSpec.edit`: JSON -> a body,
raising with the reason when it cannot) and, for gated callables, how its code is re-imported
(`NodeSpec.reload`). A refusal never raises into the app: the gate is held again with `refused`.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any, Protocol

from .. import protocol as proto
from .._base.clock import round_ms
from .code_reload import reload_in_place, reload_problem
from .skeleton import skeleton

if TYPE_CHECKING:
    from .._hub.gate import GateAnswer
    from .host import NodeHost
    from .spec import NodeSpec


class EditedNode(Protocol):
    """What this module reads and writes of a node execution (a record.py `NodeRecord`)."""

    host: NodeHost
    spec: NodeSpec
    node_id: str
    trusted: bool
    attempt: int
    attempt_started: float
    original_input: Any
    refused: str | None

    def _base(self, event_type: str) -> dict[str, Any]: ...


UNSET: Any = object()  # a node's original_input before any edit
HIDDEN_INPUTS = "input hidden by GRAPHMIND_HIDE_INPUTS"
HIDDEN_TOOL_ARGS = "input hidden by GRAPHMIND_HIDE_TOOL_ARGS"
ALLOW_RELOAD_ENV = "GRAPHMIND_ALLOW_RELOAD"
# Why reload is not offered, where no Python function of the app's is known (a gate's `notReloadable`).
NO_RELOAD_MODEL = "a model call runs no code of yours to reload (edit its input or inject a reply)"
NO_RELOAD = (
    "reload applies to a tool that is a Python function in this process; this one is not, "
    "or its adapter cannot find the function (an MCP server's tool, a provider-run tool)"
)
LAST_OUTPUTS_MAX = 512  # node ids whose last output a client keeps for the inject box


class EditRefused(Exception):
    """An edit or reload the gate cannot take; its message is `exec.paused.refused` of the re-hold."""


def contains_redacted(value: Any, depth: int = 0) -> bool:
    if value == proto.REDACTED and isinstance(value, str):
        return True
    if depth > 64:
        return False
    if isinstance(value, dict):
        return any(contains_redacted(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(contains_redacted(v, depth + 1) for v in value)
    return False


def not_editable(node: EditedNode) -> str | None:
    """Why this node's input cannot be edited, or None."""
    spec = node.spec
    switches = node.host.redaction
    if switches is not None:
        if switches.hide_inputs:
            return HIDDEN_INPUTS
        if switches.hide_tool_args and spec.kind == "tool":
            return HIDDEN_TOOL_ARGS
    if spec.edit is None:
        return proto.NOT_EDITABLE_ADAPTER
    return None


def not_reloadable(spec: NodeSpec) -> str | None:
    """Why reload is not offered for this node's code, or None (asked when a gate holds)."""
    if spec.reload is not None:
        return None
    if spec.function is not None:
        return reload_problem(spec.function)
    return NO_RELOAD_MODEL if spec.kind == "llm" else NO_RELOAD


def _outputs_hidden(node: EditedNode) -> bool:
    switches = node.host.redaction
    return switches is not None and (
        switches.hide_outputs or (switches.hide_tool_results and node.spec.kind == "tool")
    )


def paused_fields(node: EditedNode, gate: str, payload: dict[str, Any], actions: list[str]) -> dict[str, Any]:
    """What `exec.paused` says of edit, reload, the attempt and a refused answer."""
    takes = proto.EDIT_ACTIONS[gate] in actions
    reason = not_editable(node) if takes else f"a {gate} gate here takes no {proto.EDIT_ACTIONS[gate]}"
    fields: dict[str, Any] = {"editable": reason is None}
    if reason is not None:
        fields["notEditable"] = reason
    why_not = (
        not_reloadable(node.spec) if takes else f"a {gate} gate here takes no {proto.EDIT_ACTIONS[gate]}"
    )
    fields["reloadable"] = why_not is None
    if why_not is None and os.environ.get(ALLOW_RELOAD_ENV, "").strip() == "1":
        # A hub without a token refuses reload unless the app says it accepts it from any local
        # user (docs/security.md); read here, at a hold, so a test or a shell can set it late.
        fields["reloadOptIn"] = True
    if why_not is not None:
        fields["notReloadable"] = why_not
    fields["attempt"] = node.attempt
    if node.refused is not None:
        fields["refused"], node.refused = node.refused, None
    fields["injectSkeleton"] = inject_skeleton(node, gate, payload)
    return fields


def inject_skeleton(node: EditedNode, gate: str, payload: dict[str, Any]) -> Any:
    """The inject box's prefill: the node's last output, else its output schema's skeleton, else null.
    A hidden output is never copied here (the hide switches)."""
    if not _outputs_hidden(node):
        if gate == proto.AFTER and "output" in payload:
            return payload["output"]
        last = node.host.last_outputs.get(node.node_id, UNSET)
        if last is not UNSET:
            return last
    schema = node.spec.output_schema
    if callable(schema):  # built only now that a gate holds (a model step's tool roster)
        schema = schema()
    return skeleton(schema) if schema is not None else None


def keep_output(node: EditedNode, output: Any) -> None:
    """Remembers a finished node's output for the next hold of the same node (attached only)."""
    last = node.host.last_outputs
    if len(last) >= LAST_OUTPUTS_MAX and node.node_id not in last:
        last.clear()
    last[node.node_id] = output


def decide_edit(node: EditedNode, answer: GateAnswer) -> GateAnswer:
    """The answer with the body to run (`GateAnswer.body`), or EditRefused with the reason. Whether
    the gate takes an edit with this action is decided first (_node/decide.py, `edited`)."""
    spec = node.spec
    if answer.has_input:
        reason = not_editable(node)
        if reason is not None:
            raise EditRefused(f"not editable: {reason}")
        if contains_redacted(answer.input):
            raise EditRefused(
                f"the edited input still contains {proto.REDACTED!r} (a hidden value); replace it with real data"
            )
    if answer.reload:
        why_not = not_reloadable(spec)
        if why_not is not None:
            raise EditRefused(f"reload does not apply here: {why_not}")
        try:
            if spec.reload is not None:
                spec.reload()  # a gated callable's own (it calls the new definition from now on)
            else:
                reload_in_place(spec.function)
        except Exception as exc:
            raise EditRefused(f"reload failed: {type(exc).__name__}: {exc}") from exc
    if spec.edit is None:
        return answer
    value = answer.input if answer.has_input else spec.input
    try:
        body = spec.edit(value)
    except Exception as exc:
        raise EditRefused(f"the edited input cannot be used: {exc}") from exc
    return dataclasses.replace(answer, body=body)


def apply_edit(node: EditedNode, answer: GateAnswer, payload: dict[str, Any]) -> None:
    """The decided answer takes effect: an edited input becomes the node's input (the original kept
    for its ending's `originalInput`). A retry's attempt is recorded by the decision first."""
    if answer.has_input:
        if node.original_input is UNSET:
            node.original_input = node.spec.input
        node.spec.input = answer.input
        payload["input"] = answer.input


def record_attempt(node: EditedNode, gate: str, payload: dict[str, Any], started: float) -> None:
    """`node.attempt`: the attempt that ends in a retry, with its own input, error (or output) and duration."""
    event = node._base(proto.NODE_ATTEMPT)
    event.update(
        attempt=node.attempt,
        input=node.spec.input,
        durationMs=round_ms(started - node.attempt_started),
    )
    if gate == proto.ERROR_GATE:
        event["error"] = payload.get("error")
    else:
        event["output"] = payload.get("output")
    node.host.emit(event, node.trusted)
    node.attempt += 1
    node.attempt_started = node.host.clock()


def edited_fields(node: EditedNode) -> dict[str, Any]:
    """What a node's ending adds when an edited input was used."""
    if node.original_input is UNSET:
        return {}
    return {"edited": True, "input": node.spec.input, "originalInput": node.original_input}
