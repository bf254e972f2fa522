"""The one place a gate's answer is decided: every branch on a gate action in core and the
adapters is here (tests/test_one_decision.py keeps it so).

An answer comes from the hub, a timeout, a lost hub, a replay or the app's own code. `decide` turns
it into what the caller does next, carried on the returned `GateAnswer`:

- `injects`: return `value` (the adapter's conversion of the injected JSON); the body does not run,
  or its result is replaced;
- `retries`: run the body again (with `body` when an edit or reload decided a new one);
- neither: go on (run the body, with `body` when edited; keep the result; re-raise the error).

Abort never returns: it marks the run and raises RunAborted. An answer the gate cannot take (a value
that does not convert, a refused edit) returns None: the gate holds again, saying why. The call
loop, the stream loop, the replay gate and every adapter that drives gates itself only read
`injects` and `retries`: a new action is a change in this module alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeGuard

from .. import protocol as proto
from .._base.errors import RunAborted
from .._hub.gate import GateAnswer, HeldGate
from .edit import EditedNode, EditRefused, apply_edit, decide_edit, record_attempt

if TYPE_CHECKING:
    from .._runs.run import RunContext


class DecidedNode(EditedNode, Protocol):
    """What the decision reads and writes of a node execution (a record.py `NodeRecord`)."""

    run: RunContext
    injected: bool
    loop_hit: Any
    simulated: str | None
    effect_skipped: bool
    body_ran: bool

    def fail(self, exc: BaseException) -> None: ...

    def _unusable(self, exc: BaseException, what: str = "inject") -> None: ...


CONTINUE_ANSWER = GateAnswer(proto.CONTINUE, by="fast-path")


def known(action: Any) -> TypeGuard[str]:
    """An action this engine knows (a hub newer than the app may send one it does not: continue)."""
    return action in proto.ACTIONS


def normalized(node: DecidedNode, answer: GateAnswer) -> GateAnswer:
    """An action this engine does not know (a hub newer than the app) is continue, said once."""
    if known(answer.action):
        return answer
    node.host.warn(
        f"[graphmind] the hub sent an unknown gate action {answer.action!r}; continuing", key="bad-action"
    )
    return dataclasses.replace(answer, action=proto.CONTINUE)


def injected_answer(value: Any, raw: Any, by: str) -> GateAnswer:
    """An inject decided without a person (a replay's recorded output, a fork's new output)."""
    return GateAnswer(proto.INJECT, value, by=by, raw=raw, injects=True)


def takes_edit(gate: str, answer: GateAnswer, held: HeldGate | None) -> bool:
    """An edited input or a reload goes with continue at a before gate, or retry at an after or
    error gate; retry at a loop hold (a before gate) takes it too."""
    return answer.action == proto.EDIT_ACTIONS[gate] or (
        gate == proto.BEFORE and answer.action == proto.RETRY and held is not None and held.reason == "loop"
    )


def edited(node: DecidedNode, gate: str, held: HeldGate | None, answer: GateAnswer) -> GateAnswer:
    """The answer with the body an edit or reload decided (`decide_edit`), or EditRefused."""
    if not takes_edit(gate, answer, held):
        what = "an edited input" if answer.has_input else "reload"
        raise EditRefused(
            f"{what} goes with continue at a before gate or retry at an after or error gate, "
            f"not {answer.action} at the {gate} gate"
        )
    return decide_edit(node, answer)


def decide(
    node: DecidedNode,
    gate: str,
    held: HeldGate,
    answer: GateAnswer,
    started: float,
    convert: Callable[[Any], Any],
    payload: dict[str, Any],
) -> GateAnswer | None:
    """A person's (or a timeout's) answer at one of the node's gates; the gate is closed already."""
    action = answer.action
    if gate != proto.BEFORE:
        node.body_ran = True  # an after or error gate follows a run of the body (the ledger's word)
    if node.spec.actions is not None and action not in node.spec.actions:
        return CONTINUE_ANSWER  # a gate that does not take this answer (a span offers no inject)
    if action == proto.ABORT:
        abort(node, skipped=gate == proto.BEFORE)
    if answer.has_input or answer.reload:
        try:
            answer = edited(node, gate, held, answer)
        except EditRefused as exc:
            node._unusable(exc, "edit")
            return None
    if action == proto.INJECT:
        try:
            converted = convert(answer.value)
        except Exception as exc:
            node._unusable(exc)
            return None
        node.injected = True
        return dataclasses.replace(answer, value=converted, raw=answer.value, injects=True)
    if action not in (proto.CONTINUE, proto.RETRY):
        return answer  # another known action (`recorded`, a divergence's): continue
    if action == proto.RETRY and gate != proto.BEFORE:
        record_attempt(node, gate, payload, started)
        apply_edit(node, answer, payload)
        return dataclasses.replace(answer, retries=True)
    apply_edit(node, answer, payload)
    if action == proto.RETRY:  # at a before gate: a loop hold's retry starts a new streak, else continue
        if held.reason == "loop" and node.loop_hit is not None:
            node.loop_hit.restart()
            node.loop_hit = None
        return (
            dataclasses.replace(answer, action=proto.CONTINUE) if answer.body is not None else CONTINUE_ANSWER
        )
    return answer


def abort(node: DecidedNode, skipped: bool = False) -> None:
    """Abort: the run is marked aborted and the node ends with RunAborted, raised into the app.
    `skipped`: at a before gate (the body never ran: an effect's ledger says "skipped")."""
    if skipped:
        node.effect_skipped = True
    node.run.mark_aborted()
    error = RunAborted(node.run.run_id)
    node.fail(error)
    raise error


def at_divergence(
    node: DecidedNode,
    answer: GateAnswer,
    held: HeldGate,
    convert: Callable[[Any], Any],
    recorded: Callable[[], Any] | None,
) -> GateAnswer | Literal[False] | None:
    """An answer at a replay's divergence hold (docs/replay.md): abort; the recorded output
    (`recorded()` returns it, None when no usable recording); an inject; or continue live, edited or
    not. Returns the answer to act on, None to run live as the call is, or False: hold again."""
    action = answer.action
    if action == proto.ABORT:
        abort(node)
    if action == proto.RECORDED and recorded is not None:
        output = recorded()
        return injected_answer(convert(output), output, answer.by)
    # continue (a timeout and a lost hub included): live from here on
    return _inject_or_edit(node, held, answer, convert)


# An effect hold answered by nobody (docs/effects.md): simulated, never run.
_NOBODY = ("timeout", "disconnect")


def simulated_answer(
    node: DecidedNode, convert: Callable[[Any], Any], candidates: list[tuple[str, Any]], by: str
) -> GateAnswer:
    """Simulate (docs/effects.md): the first candidate value (`(source, JSON)`, best first) that the
    adapter's inject conversion turns into the framework's type; the node is marked simulated, not
    injected. When none converts, the last one goes to the app as it is (nothing runs either way)."""
    for source, value in candidates:
        try:
            converted = convert(value)
        except Exception:
            continue
        node.simulated = source
        return GateAnswer(proto.SIMULATE, converted, by=by, raw=value, injects=True)
    source, value = candidates[-1]
    node.host.warn(
        f"[graphmind] no simulated value converts to the type {node.node_id} returns; the app gets "
        f"{value!r} as it is (set effects_stub= on the tool)",
        key=f"simulate-{node.node_id}",
    )
    node.simulated = source
    return GateAnswer(proto.SIMULATE, value, by=by, raw=value, injects=True)


def at_effect(
    node: DecidedNode,
    answer: GateAnswer,
    held: HeldGate | None,
    convert: Callable[[Any], Any],
    candidates: Callable[[GateAnswer], list[tuple[str, Any]]],
) -> GateAnswer | Literal[False] | None:
    """An answer at an effect hold (reason `effect`, docs/protocol.md "Effects and safe mode"):
    abort (the call is skipped); simulate, or nobody answered (the pause timeout, the hub gone): a
    simulated value (`candidates(answer)`, the hub's value first when it sent one); inject; or
    continue, edited or not: the call runs for real. Returns the answer to act on, None to run the
    call as it is, or False: hold again."""
    action = answer.action
    if action == proto.ABORT:
        abort(node, skipped=True)
    if action == proto.SIMULATE or answer.by in _NOBODY:
        return simulated_answer(node, convert, candidates(answer), answer.answered_by or answer.by)
    return _inject_or_edit(node, held, answer, convert)  # continue: run it for real


def _inject_or_edit(
    node: DecidedNode, held: HeldGate | None, answer: GateAnswer, convert: Callable[[Any], Any]
) -> GateAnswer | Literal[False] | None:
    """The tail a divergence's and an effect hold's before gate share: an inject (False: its value
    did not convert, held again), an edited input (its body, or None), or None for continue."""
    if answer.action == proto.INJECT:
        try:
            converted = convert(answer.value)
        except Exception as exc:
            node._unusable(exc)
            return False
        node.injected = True
        return injected_answer(converted, answer.value, answer.by)
    if answer.has_input or answer.reload:
        try:
            answer = edited(node, proto.BEFORE, held, answer)
        except EditRefused as exc:
            node._unusable(exc, "edit")
            return False
        apply_edit(node, answer, {"input": node.spec.input})
        return answer if answer.body is not None else None
    return None
