"""Safe mode at a node's before gate, and the question before a write runs again (docs/effects.md),
from sync or async code (record.NodeRecord.gate / agate).

`effect_before` / `aeffect_before` return the answer the call flow acts on (a simulated value
converted by the adapter's own inject conversion, an inject, a continue after an effect hold), or
None when safe mode does not apply (the gate goes on as without it). `confirm_retry` /
`aconfirm_retry` ask "this call already ran once: run it again?" before a retried write's body runs
again. Every answer is decided in `_node/decide.py` (`at_effect`); the twins only wait or await.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

from .. import protocol as proto
from .._base.errors import RunAborted
from .._hub.gate import GateAnswer, HeldGate, async_waiter
from .._node.decide import at_effect, normalized, simulated_answer
from .._node.edit import paused_fields
from .._replay.errors import UnrecordedWrite
from .policy import FAIL, HOLD, OFF, SIMULATE
from .simulate import HUB, candidates, simulate_with
from .state import SAFE_MODE_BY

# A node is a _node.record.NodeRecord (not imported: record.py imports this module).
NodeRecord = Any

_AGAIN: Any = object()
RAN_AGAIN = "this call already ran once: run it again?"


def _mode(node: NodeRecord) -> str:
    host = node.host
    replay = host.replay
    # left the recording, or a call `only=` runs live: the replay's safe mode guards its writes
    left = replay is not None and (not replay.active or replay.runs_live(node))
    mode: str = host.effects.mode_for(node.effect, host.hub.debug, host.hub.attached, left)
    return mode


def _candidates(node: NodeRecord) -> Callable[[GateAnswer], list[tuple[str, Any]]]:
    def build(answer: GateAnswer) -> list[tuple[str, Any]]:
        found = candidates(node, node.host.effects)
        if answer.value is not None:  # the hub's own record of the call, or the card's value
            if answer.remember:
                node.host.effects.stubs[node.node_id] = answer.value
            found.insert(0, (HUB, answer.value))
        return found

    return build


def _without_hold(node: NodeRecord, mode: str, convert: Callable[[Any], Any]) -> GateAnswer | None:
    """What a guarded call gets when nothing holds: None (off), a simulated value, or the replay's failure."""
    if mode == OFF:
        return None
    if mode == FAIL:
        _unrecorded(node)
    actions = node.spec.actions
    if actions is not None and proto.INJECT not in actions:
        # an observe-only node (the framework runs the call itself, the adapter only sees it): it
        # cannot be answered with a value, so it runs, and its ledger line says it ran
        node.host.warn(
            f"[graphmind] {node.node_id} cannot be simulated: this adapter only observes the call; it ran",
            key=f"no-simulate-{node.node_id}",
        )
        return None
    if mode == HOLD:
        node.host.warn(
            f"[graphmind] GRAPHMIND_SAFE=hold, but no hub is attached to hold {node.node_id} at: it was "
            "simulated, not run; attach a hub (graphmind serve) to answer, or set GRAPHMIND_SAFE=off",
            key="safe-detached",
        )
    return simulated_answer(node, convert, _candidates(node)(GateAnswer(proto.SIMULATE)), SAFE_MODE_BY)


def _unrecorded(node: NodeRecord) -> None:
    replay = node.host.replay
    occurrence = replay._counts.get(node.node_id, 0) if replay is not None else 0
    error = UnrecordedWrite(
        node.node_id,
        occurrence,
        "a write call the recording did not have (mark the test @pytest.mark.graphmind(live=True) "
        "to let it run)",
        source=replay.source if replay is not None else "",
    )
    if replay is not None:
        replay.report(error)
    node.fail(error)
    raise error


def _open(node: NodeRecord, is_async: bool, ran_before: int = 0) -> HeldGate:
    if node.run._aborted:
        node.effect_skipped = ran_before == 0
        error = RunAborted(node.run.run_id)
        node.fail(error)
        raise error
    node.flush_tokens()
    actions = [a for a in proto.EFFECT_ACTIONS if node.spec.actions is None or a in node.spec.actions]
    payload = {"input": node.spec.input}
    paused = node._base(proto.EXEC_PAUSED)
    paused.update(gate=proto.BEFORE, reason=proto.EFFECT, actions=actions, input=node.spec.input)
    paused.update(effect=node.effect.wire(), simulateWith=simulate_with(node, node.host.effects))
    if ran_before:
        paused.update(
            ranBefore=ran_before,
            why=RAN_AGAIN if ran_before == 1 else RAN_AGAIN.replace("once", f"{ran_before} times"),
        )
    paused.update(paused_fields(node, proto.BEFORE, payload, actions))
    waiter = async_waiter() if is_async else None
    held: HeldGate = node.host.hub.open_gate(paused, node.run, proto.BEFORE, waiter, node.trusted)
    return held


def _answer(
    node: NodeRecord, held: HeldGate, answer: GateAnswer, started: float, convert: Callable[[Any], Any]
) -> Any:
    answer = normalized(node, answer)
    node._close(held, answer, started)
    node.effect_by = answer.answered_by or answer.by
    decided = at_effect(node, answer, held, convert, _candidates(node))
    if decided is False:
        return _AGAIN
    if decided is None:
        node.effect_held = True
        return GateAnswer(proto.CONTINUE, by=answer.by)
    if not decided.injects:
        node.effect_held = True  # continue with an edited input: it runs for real
    return decided


def effect_before(node: NodeRecord, convert: Callable[[Any], Any]) -> GateAnswer | None:
    mode = _mode(node)
    if mode != HOLD or not node.host.hub.attached:
        return _without_hold(node, mode, convert)
    while True:
        held = _open(node, False)
        started = node.host.clock()
        try:
            answer = held.wait(node.host.pause_timeout)
        except BaseException:
            node._close(held, GateAnswer(proto.CONTINUE, by="cancelled"), started)
            raise
        decided = _answer(node, held, answer, started, convert)
        if decided is not _AGAIN:
            return decided  # type: ignore[no-any-return]


async def aeffect_before(node: NodeRecord, convert: Callable[[Any], Any]) -> GateAnswer | None:
    mode = _mode(node)
    if mode != HOLD or not node.host.hub.attached:
        return await _settled(_without_hold(node, mode, convert))
    while True:
        held = _open(node, True)
        started = node.host.clock()
        try:
            answer = await held.wait_async(node.host.pause_timeout)
        except BaseException:
            node._close(held, GateAnswer(proto.CONTINUE, by="cancelled"), started)
            raise
        decided = _answer(node, held, answer, started, convert)
        if decided is not _AGAIN:
            return await _settled(decided)


async def _settled(answer: GateAnswer | None) -> GateAnswer | None:
    """An async converter (`async def from_injected`) gave a coroutine: await it here."""
    if answer is None or not asyncio.iscoroutine(answer.value):
        return answer
    return dataclasses.replace(answer, value=await answer.value)


def _asks_again(node: NodeRecord, decided: GateAnswer | None) -> bool:
    effect = node.effect
    return decided is not None and decided.retries and effect is not None and effect.cls == proto.WRITE


def _retry_outcome(node: NodeRecord, retry: GateAnswer, decided: Any) -> Any:
    if decided is _AGAIN or decided.injects:
        return decided
    if decided.body is not None:
        return dataclasses.replace(retry, body=decided.body)
    return retry


def confirm_retry(
    node: NodeRecord, retry: GateAnswer | None, convert: Callable[[Any], Any]
) -> GateAnswer | None:
    """A retry of a write whose body ran: "this call already ran once: run it again?" first."""
    if not _asks_again(node, retry):
        return retry
    assert retry is not None
    ran = node.attempt - 1
    while True:
        if not node.host.hub.attached:
            return _without_hold(node, SIMULATE, convert)
        held = _open(node, False, ran)
        started = node.host.clock()
        try:
            answer = held.wait(node.host.pause_timeout)
        except BaseException:
            node._close(held, GateAnswer(proto.CONTINUE, by="cancelled"), started)
            raise
        decided = _retry_outcome(node, retry, _answer(node, held, answer, started, convert))
        if decided is not _AGAIN:
            return decided  # type: ignore[no-any-return]


async def aconfirm_retry(
    node: NodeRecord, retry: GateAnswer | None, convert: Callable[[Any], Any]
) -> GateAnswer | None:
    if not _asks_again(node, retry):
        return retry
    assert retry is not None
    ran = node.attempt - 1
    while True:
        if not node.host.hub.attached:
            return await _settled(_without_hold(node, SIMULATE, convert))
        held = _open(node, True, ran)
        started = node.host.clock()
        try:
            answer = await held.wait_async(node.host.pause_timeout)
        except BaseException:
            node._close(held, GateAnswer(proto.CONTINUE, by="cancelled"), started)
            raise
        decided = _retry_outcome(node, retry, _answer(node, held, answer, started, convert))
        if decided is not _AGAIN:
            return await _settled(decided)
