"""The whole node around one call: before gate, body, error or after gate, retries, injects.

`call_flow` decides every step, once, for sync and async alike: it is a generator that asks for
what it needs (pass a gate, run the body, settle a result) and is told how that went.
`CallLoop.run_sync` and `run_async` (methods of every `NodeExecution`, engine.py) only do what it
asks, calling or awaiting. A gate's answer is decided in `_node/decide.py` alone: the flow only reads
what it decided (`injects`, `retries`), so a new gate action is never a change here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar, cast

from .. import protocol as proto
from .._base.errors import RunAborted
from .._hub.gate import GateAnswer
from .record import GATE, NodeRecord, Request
from .spec import Settled, describe_error

T = TypeVar("T")

# What the call flow asks of its driver besides a gate (record.GATE): (BODY,) -> the body's result
# (its exception is thrown into the flow); (BODY, body) -> the same, the driver running `body` from
# now on (an edit or reload decided it, _node/edit.py); (SETTLE, result) -> Settled.
BODY, SETTLE = "body", "settle"
_BODY: Request = (BODY,)


def _identity(value: Any) -> Any:
    return value


def injected(node: NodeRecord, answer: GateAnswer) -> Any:
    """Finishes a node answered by an inject; returns what the app gets."""
    value = answer.value
    if isinstance(value, Settled):
        node.finish(value.output, usage=value.usage)
        return value.result
    node.finish(answer.raw)
    return value


def _failed(node: NodeRecord, exc: Exception) -> Generator[Request, Any, GateAnswer]:
    """An attempt raised `exc`: the error gate if one is needed. Returns a retry (its `body` set
    when edited) or an inject; anything else (continue, no gate, an abort) fails the node and
    re-raises the very object."""
    if not isinstance(exc, RunAborted) and node.gate_needed(proto.ERROR_GATE):
        answer = yield (GATE, proto.ERROR_GATE, {"input": node.spec.input, "error": describe_error(exc)})
        if answer.retries or answer.injects:
            return cast("GateAnswer", answer)
    node.fail(exc)
    raise exc  # continue: the original exception object, untouched


def call_flow(
    node: NodeRecord,
    describe_output: Callable[[Any], Any] | None,
    describe_usage: Callable[[Any], dict[str, Any] | None] | None,
    settling: bool,
    before: bool = True,
) -> Generator[Request, Any, Any]:
    """Every decision of a node around one call; returns what the app gets, or raises.

    A gate that cannot hold or raise (detached, or nothing holds it) is passed here without a round
    trip to the driver: the fast path of every call the debugger does not stop. `describe_output`
    None: the output is the result itself (no call per node). `before` False: no before gate (the
    driver ran the body already, `CallLoop._detached`)."""
    needed = node.gate_needed
    body: Request = _BODY
    # `NodeRecord.may_hold` inlined (two calls less per node): detached with the run not aborted,
    # no gate can hold or raise, so `gate_needed` is not asked. Both are read again at each gate
    # (a hub attaching mid-call holds the after gate); the transport object itself never changes.
    transport = node.host.hub.transport
    run = node.run
    if before and (
        node.host.replay is not None
        or node.guarded  # safe mode answers at the before gate, attached or not (docs/effects.md)
        or ((run._aborted or (transport is not None and transport.attached)) and needed(proto.BEFORE))
    ):  # a replay answers at the before gate, attached or not (docs/replay.md)
        answer = yield (GATE, proto.BEFORE, {"input": node.spec.input})
        if answer.injects:
            return injected(node, answer)
        if answer.body is not None:
            body = (BODY, answer.body)
    current = node.host.current_node
    while True:
        token = current.set(node.instance_id)  # the body's nodes are this node's children
        try:
            result = yield body
        except Exception as exc:
            answer = yield from _failed(node, exc)
            if answer.retries:
                if answer.body is not None:
                    body = (BODY, answer.body)
                continue
            return injected(node, answer)
        finally:
            current.reset(token)
        usage = None
        owned = False
        app_result = result
        if settling:
            # The adapter's settle reads this attempt's reply (a body read can fail like the call)
            try:
                settled = yield (SETTLE, result)
            except Exception as exc:
                answer = yield from _failed(node, exc)
                if answer.retries:
                    if answer.body is not None:
                        body = (BODY, answer.body)
                    continue
                return injected(node, answer)
            if settled.finishes_later:
                return settled.result
            output, usage, app_result, owned = settled.output, settled.usage, settled.result, settled.owned
        else:
            output = result if describe_output is None else describe_output(result)
        if (run._aborted or (transport is not None and transport.attached)) and needed(proto.AFTER):
            answer = yield (GATE, proto.AFTER, {"input": node.spec.input, "output": output})
            if answer.retries:
                if answer.body is not None:
                    body = (BODY, answer.body)
                continue
            if answer.injects:
                return injected(node, answer)
        if not settling and describe_usage is not None:
            usage = describe_usage(result)
        node.finish(output, usage=usage, owned=owned)
        return app_result


class CallLoop(NodeRecord):
    """A node's loop around one call, from sync or async code (`NodeExecution` has it).

    Detached (`_detached`), the body runs before the flow is built, and so does the adapter's
    `settle` hook; the flow is built only when one of them raised or a hub attached meanwhile (an
    error or after gate may hold then): most calls of a detached app never build it. A call that
    ends with no gate possible ends as the flow ends one (`_ended_detached`, `_settled_detached`);
    every gate is still decided by the flow alone, entered where the driver stopped (`_first`)."""

    def _detached(self) -> bool:
        """No gate can hold before the body: no hub attached, the run not aborted, no replay."""
        return self.host.replay is None and not self.may_hold()

    def _ended_detached(
        self,
        result: Any,
        describe: Callable[[Any], Any] | None,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None,
    ) -> bool:
        """`call_flow`'s ending of an attempt that returned, when no after gate can hold (still
        detached, the run not aborted): describe and finish. False: the flow must decide."""
        if self.may_hold():
            return False
        output = result if describe is None else describe(result)
        self.finish(output, usage=None if describe_usage is None else describe_usage(result))
        return True

    def _settled_detached(self, settled: Settled) -> bool:
        """`call_flow`'s ending of an attempt whose `settle` returned, when no after gate can hold:
        finish (unless the reply finishes later: a stream). False: the flow must decide."""
        if settled.finishes_later:
            return True
        if self.may_hold():
            return False
        self.finish(settled.output, usage=settled.usage, owned=settled.owned)
        return True

    def run_sync(
        self,
        call: Callable[[], T],
        describe_output: Callable[[Any], Any] | None = _identity,
        from_injected: Callable[[Any], Any] = _identity,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None = None,
        settle: Callable[[Any], Settled] | None = None,
    ) -> T:
        """Runs `call` as this node: before gate, body, error or after gate, retry, inject, abort.

        `settle` (optional) is called with each result of `call`, outside the node's context,
        before the after gate; its `Settled` says what the after gate sees and what the app gets.
        Without it, `describe_output` / `describe_usage` describe the result and the app gets the
        result itself. A `from_injected` that returns a `Settled` finishes an injected node with
        its description and hands the app its `result`.
        """
        describe = None if describe_output is _identity else describe_output  # None: no call per node
        outcome: tuple[bool, Any] | None = None
        settled: tuple[bool, Any] | None = None
        if self._detached():
            current = self.host.current_node
            token = current.set(self.instance_id)  # the body's nodes are this node's children
            try:
                result = call()
            except BaseException as exc:
                outcome = (False, exc)
            else:
                outcome = (True, result)
            finally:
                current.reset(token)
            if outcome[0]:
                if settle is None:
                    if self._ended_detached(result, describe, describe_usage):
                        return result
                else:  # outside the node's context, as the flow calls it
                    try:
                        done = settle(result)
                    except BaseException as exc:
                        settled = (False, exc)
                    else:
                        if self._settled_detached(done):
                            return done.result  # type: ignore[no-any-return]
                        settled = (True, done)
        flow = call_flow(self, describe, describe_usage, settle is not None, outcome is None)
        try:
            request = _first(flow, outcome, settled)
            while True:
                try:
                    if request[0] is BODY:
                        if len(request) > 1:
                            call = request[1]
                        reply: Any = call()
                    elif request[0] is GATE:
                        reply = self.gate(request[1], request[2], from_injected)
                    else:
                        reply = settle(request[1])  # type: ignore[misc]  # SETTLE is asked only with a settle
                except BaseException as exc:
                    request = flow.throw(exc)
                else:
                    request = flow.send(reply)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # (typing.cast is a Python call per node)
        except BaseException as exc:
            self._ended_by(exc)
            raise

    async def run_async(
        self,
        call: Callable[[], Awaitable[T]],
        describe_output: Callable[[Any], Any] | None = _identity,
        from_injected: Callable[[Any], Any] = _identity,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None = None,
        settle: Callable[[Any], Awaitable[Settled]] | None = None,
    ) -> T:
        """`run_sync` from async code: a hold awaits; `settle` is a coroutine function here (it may
        read a body)."""
        describe = None if describe_output is _identity else describe_output
        outcome: tuple[bool, Any] | None = None
        settled: tuple[bool, Any] | None = None
        if self._detached():
            current = self.host.current_node
            token = current.set(self.instance_id)
            try:
                result = await call()
            except BaseException as exc:
                outcome = (False, exc)
            else:
                outcome = (True, result)
            finally:
                current.reset(token)
            if outcome[0]:
                if settle is None:
                    if self._ended_detached(result, describe, describe_usage):
                        return result
                else:
                    try:
                        done = await settle(result)
                    except BaseException as exc:
                        settled = (False, exc)
                    else:
                        if self._settled_detached(done):
                            return done.result  # type: ignore[no-any-return]
                        settled = (True, done)
        flow = call_flow(self, describe, describe_usage, settle is not None, outcome is None)
        try:
            request = _first(flow, outcome, settled)
            while True:
                try:
                    if request[0] is BODY:
                        if len(request) > 1:
                            call = request[1]
                        reply: Any = await call()
                    elif request[0] is GATE:
                        reply = await self.agate(request[1], request[2], from_injected)
                    else:
                        reply = await settle(request[1])  # type: ignore[misc]  # as above
                except BaseException as exc:
                    request = flow.throw(exc)
                else:
                    request = flow.send(reply)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # (typing.cast is a Python call per node)
        except BaseException as exc:
            self._ended_by(exc)
            raise

    def _ended_by(self, exc: BaseException) -> None:
        """The call left its flow raising `exc`; a node the flow did not end ends here. The flow ends
        every node whose body or gate raised an `Exception`; what it does not catch is the caller
        giving up: a cancelled task (asyncio's `CancelledError`, trio's `Cancelled`) or an interrupt
        (`KeyboardInterrupt`, `GeneratorExit`), at a held gate or in the body. That node fails
        `cancelled: true` (the viewer says "cancelled by the app"), never left running forever."""
        if not self.ended:
            if isinstance(exc, Exception):
                self.fail(exc)
            else:
                self.fail(exc, cancelled=True)


def _first(
    flow: Generator[Request, Any, Any],
    outcome: tuple[bool, Any] | None,
    settled: tuple[bool, Any] | None = None,
) -> Request:
    """The flow's first request; after a body the driver already ran (`outcome`: returned, and the
    result; or raised, and the exception), the one that comes of that outcome; after a `settle` it
    ran too (`settled`, likewise), the one that comes of that."""
    if outcome is None:
        return next(flow)
    next(flow)  # the flow, with no before gate, asks for the body first: it ran already
    request = flow.throw(outcome[1]) if not outcome[0] else flow.send(outcome[1])
    if settled is None:
        return request
    # it asks to settle that result next (SETTLE): the driver did, with this outcome
    return flow.throw(settled[1]) if not settled[0] else flow.send(settled[1])
