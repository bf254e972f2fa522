"""A replay at a node's before gate, from sync or async code (record.NodeRecord.gate / agate).

`replay_before` / `areplay_before` return the answer the call flow acts on (an inject whose value
went through the adapter's own inject conversion: the one conversion that serves inject, edit and
replay), or None to go on as without a replay (the call runs live). A recorded error is raised at
the node; a divergence holds, goes live or raises as the policy says. Everything is decided by
`Replayer.decide` and `_answer` here; the twins only wait or await.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

from .. import protocol as proto
from .._base.errors import RunAborted
from .._hub.gate import GateAnswer, HeldGate, async_waiter
from .._node.decide import at_divergence, edited, injected_answer, normalized
from .._node.edit import EditRefused, apply_edit, paused_fields
from .errors import CassetteError, ReplayDivergence, ReplayedError, UnrecordedWrite
from .replayer import DIVERGED, FORK_INPUT, FORK_OUTPUT, REPLAY, Decision, Replayer

# A node is a _node.record.NodeRecord (not imported: record.py imports this module).
NodeRecord = Any

_AGAIN: Any = object()  # the answer could not be used: hold again


def replay_before(node: NodeRecord, gate: str, convert: Callable[[Any], Any]) -> GateAnswer | None:
    replay: Replayer = node.host.replay
    if gate != proto.BEFORE or not replay.active:
        return None
    decision = replay.decide(node)
    if decision is None:
        return None
    if decision.kind != DIVERGED:
        return _matched(node, replay, decision, convert)
    if _policy(node, replay) != "hold":
        _not_held(node, replay, decision)
        return None
    while True:
        held = _open(node, replay, decision, False)
        started = node.host.clock()
        answer = held.wait(node.host.pause_timeout)
        answer = normalized(node, answer)
        node._close(held, answer, started)
        decided = _answer(node, replay, decision, answer, convert, held)
        if decided is not _AGAIN:
            return decided  # type: ignore[no-any-return]


async def areplay_before(node: NodeRecord, gate: str, convert: Callable[[Any], Any]) -> GateAnswer | None:
    replay: Replayer = node.host.replay
    if gate != proto.BEFORE or not replay.active:
        return None
    decision = replay.decide(node)
    if decision is None:
        return None
    if decision.kind != DIVERGED:
        return await _settled(node, _matched(node, replay, decision, convert))
    if _policy(node, replay) != "hold":
        _not_held(node, replay, decision)
        return None
    while True:
        held = _open(node, replay, decision, True)
        started = node.host.clock()
        try:
            answer = await held.wait_async(node.host.pause_timeout)
        except BaseException:
            node._close(held, GateAnswer(proto.CONTINUE, by="cancelled"), started)
            raise
        answer = normalized(node, answer)
        node._close(held, answer, started)
        decided = _answer(node, replay, decision, answer, convert, held)
        if decided is _AGAIN:
            continue
        try:
            return await _settled(node, decided)
        except _Unusable:
            continue


class _Unusable(Exception):
    pass


async def _settled(node: NodeRecord, answer: GateAnswer | None) -> GateAnswer | None:
    """An async converter (`async def from_injected`) gave a coroutine: await it here."""
    if answer is None or not asyncio.iscoroutine(answer.value):
        return answer
    try:
        return dataclasses.replace(answer, value=await answer.value)
    except Exception as exc:
        node.injected = node.replayed = False
        node._unusable(exc)
        raise _Unusable from exc


def _policy(node: NodeRecord, replay: Replayer) -> str:
    return replay.policy(node.host.hub.attached)


def _matched(
    node: NodeRecord, replay: Replayer, decision: Decision, convert: Callable[[Any], Any]
) -> GateAnswer | None:
    rec = decision.recorded
    assert rec is not None
    if decision.kind == FORK_OUTPUT:
        node.injected = True
        return injected_answer(convert(decision.value), decision.value, "replay")
    if decision.kind == FORK_INPUT:
        return _forked_input(node, decision)
    if decision.kind != REPLAY:
        return None
    node.replayed = True
    replay.replayed += 1
    if rec.error is not None:
        raise _recorded_error(node, rec.error)
    return injected_answer(convert(rec.output), rec.output, "replay")


def _forked_input(node: NodeRecord, decision: Decision) -> GateAnswer | None:
    """A fork with an edited input (docs/replay.md, "Fork"): this call runs live with it, through
    edit's one decision (_node/edit.py), as if a person had answered the before gate with it."""
    answer = GateAnswer(proto.CONTINUE, by="replay", input=decision.value, has_input=True)
    try:
        answer = edited(node, proto.BEFORE, None, answer)  # edit's one decision, as at any before gate
    except EditRefused as exc:
        error = CassetteError(
            f"graphmind: the fork's input for {node.node_id}#{decision.occurrence} cannot be used: {exc}"
        )
        node.fail(error)
        raise error from None
    apply_edit(node, answer, {"input": node.spec.input})
    return answer if answer.body is not None else None


def _recorded_error(node: NodeRecord, error: dict[str, Any]) -> BaseException:
    """The recorded error as the framework's own exception where the adapter rebuilds it, else
    ReplayedError; the node ends with it (marked replayed)."""
    name, message = str(error.get("name") or ""), str(error.get("message") or "")
    exc: BaseException | None = None
    rebuild = node.spec.replay_error
    if rebuild is not None:
        try:
            exc = rebuild(error)
        except Exception:
            exc = None
    if exc is None:
        exc = ReplayedError(name, message)
    node.fail(exc, error={"name": name, "message": message, "stack": ""}, replayed=True)
    return exc


def _not_held(node: NodeRecord, replay: Replayer, decision: Decision) -> None:
    """`live`: this call and everything after it run live. `fail`: ReplayDivergence at the node."""
    if _policy(node, replay) == "live":
        replay.go_live()
        return
    why = decision.why
    if replay.settings.on_divergence == "hold":
        why += " (on_divergence=hold, but no hub is attached to hold at)"
    effect = node.effect
    kind = UnrecordedWrite if effect is not None and effect.cls == proto.WRITE else ReplayDivergence
    error = kind(node.node_id, decision.occurrence, why, replay.diff(node, decision), replay.source)
    replay.go_live()
    replay.report(error)
    node.fail(error)
    raise error


def _open(node: NodeRecord, replay: Replayer, decision: Decision, is_async: bool) -> HeldGate:
    if node.run._aborted:
        error = RunAborted(node.run.run_id)
        node.fail(error)
        raise error
    node.flush_tokens()
    actions = [a for a in proto.DIVERGENCE_ACTIONS if a != proto.RECORDED or decision.usable()]
    paused = node._base(proto.EXEC_PAUSED)
    paused.update(gate=proto.BEFORE, reason=proto.DIVERGENCE, actions=actions)
    paused.update(replay.paused_fields(node, decision))
    # "Edit input" at a divergence (issue 31): edit's own fields, so the card offers it as at any
    # before gate (and says why not, a refused edit included).
    paused.update(paused_fields(node, proto.BEFORE, {"input": paused["input"]}, actions))
    waiter = async_waiter() if is_async else None
    held: HeldGate = node.host.hub.open_gate(paused, node.run, proto.BEFORE, waiter, node.trusted)
    return held


def _answer(
    node: NodeRecord,
    replay: Replayer,
    decision: Decision,
    answer: GateAnswer,
    convert: Callable[[Any], Any],
    held: HeldGate,
) -> Any:
    """The answer at a divergence hold, decided in the one place (_node/decide.py); the replay's
    own bookkeeping here: a recorded output counts as replayed, anything that runs goes live."""

    def recorded() -> Any:
        rec = decision.recorded
        assert rec is not None
        node.replayed = True
        replay.replayed += 1
        return rec.output

    decided = at_divergence(node, answer, held, convert, recorded if decision.usable() else None)
    if decided is False:
        return _AGAIN
    if decided is None or not decided.injects:
        replay.go_live()  # continue, edited or not: live from here on
    return decided
