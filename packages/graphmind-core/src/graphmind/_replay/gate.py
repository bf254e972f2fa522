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
from .errors import ReplayDivergence, ReplayedError
from .replayer import DIVERGED, FORK_OUTPUT, REPLAY, Decision, Replayer

# A node is a _node.record.NodeRecord (not imported: record.py imports this module).
NodeRecord = Any

_AGAIN: Any = object()  # the answer could not be used: hold again


def replay_before(node: NodeRecord, replay: Replayer, convert: Callable[[Any], Any]) -> GateAnswer | None:
    decision = replay.decide(node)
    if decision is None:
        return None
    if decision.kind != DIVERGED:
        return _matched(node, replay, decision, convert)
    if _policy(node, replay) != "hold":
        return _not_held(node, replay, decision)
    while True:
        held = _open(node, replay, decision, False)
        started = node.host.clock()
        answer = held.wait(node.host.pause_timeout)
        node._close(held, answer, started)
        decided = _answer(node, replay, decision, answer, convert)
        if decided is not _AGAIN:
            return decided  # type: ignore[no-any-return]


async def areplay_before(
    node: NodeRecord, replay: Replayer, convert: Callable[[Any], Any]
) -> GateAnswer | None:
    decision = replay.decide(node)
    if decision is None:
        return None
    if decision.kind != DIVERGED:
        return await _settled(node, _matched(node, replay, decision, convert))
    if _policy(node, replay) != "hold":
        return _not_held(node, replay, decision)
    while True:
        held = _open(node, replay, decision, True)
        started = node.host.clock()
        try:
            answer = await held.wait_async(node.host.pause_timeout)
        except BaseException:
            node._close(held, GateAnswer(proto.CONTINUE, by="cancelled"), started)
            raise
        node._close(held, answer, started)
        decided = _answer(node, replay, decision, answer, convert)
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
        return GateAnswer(proto.INJECT, convert(decision.value), by="replay", raw=decision.value)
    if decision.kind != REPLAY:  # a fork with an edited input: docs/replay.md, "Fork"
        return None
    node.replayed = True
    replay.replayed += 1
    if rec.error is not None:
        raise _recorded_error(node, rec.error)
    return GateAnswer(proto.INJECT, convert(rec.output), by="replay", raw=rec.output)


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
        return None
    why = decision.why
    if replay.settings.on_divergence == "hold":
        why += " (on_divergence=hold, but no hub is attached to hold at)"
    error = ReplayDivergence(node.node_id, decision.occurrence, why, replay.diff(node, decision), replay.source)
    replay.go_live()
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
    waiter = async_waiter() if is_async else None
    return node.host.hub.open_gate(paused, node.run, proto.BEFORE, waiter, node.trusted)


def _answer(
    node: NodeRecord, replay: Replayer, decision: Decision, answer: GateAnswer, convert: Callable[[Any], Any]
) -> Any:
    action = answer.action
    if action == proto.ABORT:
        node.run.mark_aborted()
        error = RunAborted(node.run.run_id)
        node.fail(error)
        raise error
    if action == proto.RECORDED and decision.usable():
        rec = decision.recorded
        assert rec is not None
        node.replayed = True
        replay.replayed += 1
        return GateAnswer(proto.INJECT, convert(rec.output), by=answer.by, raw=rec.output)
    if action == proto.INJECT:
        try:
            converted = convert(answer.value)
        except Exception as exc:
            node._unusable(exc)
            return _AGAIN
        node.injected = True
        return GateAnswer(proto.INJECT, converted, by=answer.by, raw=answer.value)
    # continue (a timeout and a lost hub included): live from here on
    replay.go_live()
    return None
