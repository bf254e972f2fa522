"""The gate engine: one node executor for every adapter (design.md §2).

```
started ─► before gate ─► body ─► after gate ─► finished
              │ inject: skip body       │ inject: replace result
              │ abort: RunAborted       │ retry: run body again
              ▼                         ▼
                     error gate (body raised)
   continue: re-raise · inject: return value · retry: run body again · abort
```

An adapter describes a node (`NodeSpec`), and either hands the engine the call
(`client.execute` / `client.aexecute`, with a `settle` hook when the body's result needs the
adapter's say before the after gate: a live stream, a body to read, a result to replace) or, when it
must own the call itself, drives a `NodeExecution` gate by gate. Nothing here knows about any framework.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from . import protocol as proto
from ._call_loop import CallLoop
from ._clock import round_ms
from ._errors import RunAborted
from ._gate import GateAnswer, HeldGate
from ._node import NodeSpec, describe_error
from ._run import RunContext
from ._stream_loop import StreamLoop

if TYPE_CHECKING:
    from ._client import Client

T = TypeVar("T")

CONTINUE_ANSWER = GateAnswer(proto.CONTINUE, by="fast-path")
_NO_TOKENS: Any = contextlib.nullcontext()


def _identity(value: Any) -> Any:
    return value


class NodeExecution(CallLoop, StreamLoop):
    """One execution of one node: its events, its gates, its timing."""

    def __init__(self, client: Client, spec: NodeSpec, run: RunContext, parent: str | None) -> None:
        self.client = client
        self.spec = spec
        self.run = run
        self.node_id: str = spec.node_id or f"{spec.kind}:{spec.name}"
        self.instance_id = spec.instance_id or client._new_instance_id()
        self.parent_instance_id = parent
        self.started_at = client._clock()
        self.held_ms = 0.0
        self.injected = False
        self.ended = False
        self.loop_hit: Any = None
        self.hold_why: str | None = None  # a hold_if verdict: None = not asked yet, "" = no hold
        self._deltas: list[dict[str, Any]] = []
        self._last_flush = self.started_at
        try:  # one check per node lets the pipeline skip the identity fields of its events
            self.trusted = (self.node_id + spec.kind + spec.name + self.instance_id + (parent or "") + run.run_id).isascii()
        except TypeError:  # a name that is not a str: the pipeline reads every field
            self.trusted = False
        self._token_lock = _NO_TOKENS  # replaced by a real lock on the first delta (see token())

    # ---- identity and events -------------------------------------------------------------------
    def _base(self, event_type: str) -> dict[str, Any]:
        return {
            "type": event_type,
            "runId": self.run.run_id,
            "nodeId": self.node_id,
            "instanceId": self.instance_id,
            "kind": self.spec.kind,
            "name": self.spec.name,
        }

    def _emit_started(self) -> int:
        event = self._base(proto.NODE_STARTED)
        event["parentInstanceId"] = self.parent_instance_id
        event["input"] = self.spec.input
        if self.spec.attrs:
            event["attrs"] = self.spec.attrs
        if self.spec.extra:
            event.update(self.spec.extra)
        return self.client._emit(event, self.trusted)

    @contextmanager
    def active(self) -> Iterator[None]:
        """Marks this execution as the parent of nodes started inside it."""
        token = self.client._current_node.set(self.instance_id)
        try:
            yield
        finally:
            self.client._current_node.reset(token)

    def _duration(self) -> float:
        return round_ms(self.client._clock() - self.started_at)

    # ---- streamed tokens -----------------------------------------------------------------------
    def token(self, text: str, t: str = "text", **extra: Any) -> None:
        """A streamed delta; batched into `node.token` frames about every 34 ms.

        A batch not sent by the next delta is sent by the client's flusher within the interval, so
        the tail of a stream that pauses still reaches the viewer before the step ends.
        """
        if not self.client.live or self.ended:
            return
        if self._token_lock is _NO_TOKENS:
            # The app thread appends, the client's flusher may flush: from the first delta on they share a lock.
            self._token_lock = threading.Lock()
        with self._token_lock:
            deltas = self._deltas
            was_empty = not deltas
            last = deltas[-1] if deltas else None
            if last is not None and last["t"] == t and len(last) == 2 + len(extra) and all(last.get(k) == v for k, v in extra.items()):
                last["v"] += text
            else:
                delta = {"t": t, "v": text}
                delta.update(extra)
                deltas.append(delta)
            now = self.client._clock()
            due = now - self._last_flush >= self.client._token_flush_ms
        if due:
            self.flush_tokens(now)
        elif was_empty:
            self.client._schedule_token_flush(self)

    def flush_tokens(self, now: float | None = None) -> None:
        if not self._deltas:
            return  # nothing streamed (most nodes): no lock to take
        with self._token_lock:
            if not self._deltas:
                return
            deltas, self._deltas = self._deltas, []
            self._last_flush = self.client._clock() if now is None else now
        event = self._base(proto.NODE_TOKEN)
        event["deltas"] = deltas
        self.client._emit(event, self.trusted)

    # ---- endings --------------------------------------------------------------------------------
    def finish(self, output: Any = None, *, usage: dict[str, Any] | None = None, cut_short: bool = False, **extra: Any) -> None:
        if self.ended:
            return
        self.flush_tokens()
        self.ended = True
        event = self._base(proto.NODE_FINISHED)
        event["output"] = output
        event["durationMs"] = self._duration()
        event["heldMs"] = round_ms(self.held_ms)
        if self.injected:
            event["injected"] = True
        if usage is not None:
            event["usage"] = usage
        if cut_short:
            event["cutShort"] = True
        event.update(extra)
        self.client._emit(event, self.trusted)

    def fail(self, exc: BaseException, **extra: Any) -> None:
        if self.ended:
            return
        self.flush_tokens()
        self.ended = True
        event = self._base(proto.NODE_ERROR)
        event["error"] = describe_error(exc)
        event["durationMs"] = self._duration()
        event["heldMs"] = round_ms(self.held_ms)
        event.update(extra)
        self.client._emit(event, self.trusted)

    # ---- gates ---------------------------------------------------------------------------------
    def wants_hold(self, gate: str) -> bool:
        """Would this gate hold now? Streaming adapters ask before deciding to buffer a stream."""
        return self.client._hold_reason(self, gate, consume=False) is not None

    def _check_aborted(self) -> None:
        if self.run.aborted:
            error = RunAborted(self.run.run_id)
            self.fail(error)
            raise error

    def _open(self, gate: str, payload: dict[str, Any], loop: asyncio.AbstractEventLoop | None) -> HeldGate | None:
        self._check_aborted()
        reason = self.client._hold_reason(self, gate)
        if reason is None:
            return None
        self.flush_tokens()
        return self.client._open_gate(self, gate, reason, payload, loop)

    def _settle(self, gate: str, held: HeldGate, answer: GateAnswer, started: float, convert: Callable[[Any], Any]) -> GateAnswer | None:
        """Applies an answer. Returns None when the gate must be held again (an injected value did not convert)."""
        held_for = self.client._clock() - started
        self.held_ms += held_for
        self.client._close_gate(self, held, answer, held_for)
        action = answer.action
        if self.spec.actions is not None and action not in self.spec.actions:
            return CONTINUE_ANSWER  # a gate that does not take this answer (a span offers no inject)
        if action == proto.ABORT:
            self.run.mark_aborted()
            error = RunAborted(self.run.run_id)
            self.fail(error)
            raise error
        if action == proto.RETRY and gate == proto.BEFORE:
            return CONTINUE_ANSWER
        if action == proto.INJECT:
            try:
                converted = convert(answer.value)
            except Exception as exc:
                self._unusable(exc)
                return None
            self.injected = True
            return dataclasses.replace(answer, value=converted, raw=answer.value)
        if action not in proto.ACTIONS:
            return CONTINUE_ANSWER
        return answer

    def _unusable(self, exc: BaseException) -> None:
        self.client._warn(
            f"[graphmind] the injected value for {self.node_id} could not be used ({type(exc).__name__}: {exc}); "
            "the gate is held again: inject a value of the right shape, or continue.",
            key=f"inject-{self.node_id}",
        )

    def gate(self, gate: str, payload: dict[str, Any] | None = None, convert: Callable[[Any], Any] = _identity) -> GateAnswer:
        """Passes one gate from sync code. Raises RunAborted on abort; an inject answer carries the converted value."""
        transport = self.client._transport
        if (transport is None or not transport.attached) and not self.run._aborted:
            return CONTINUE_ANSWER  # detached: nothing can hold (the fast path of design.md §2)
        while True:
            held = self._open(gate, payload or {}, None)
            if held is None:
                return CONTINUE_ANSWER
            started = self.client._clock()
            answer = held.wait(self.client.options.pause_timeout)
            settled = self._settle(gate, held, answer, started, convert)
            if settled is not None:
                return settled

    async def agate(self, gate: str, payload: dict[str, Any] | None = None, convert: Callable[[Any], Any] = _identity) -> GateAnswer:
        """Passes one gate from asyncio code without blocking the loop.

        `convert` may be a coroutine function here (an adapter that must await to build its type).
        """
        transport = self.client._transport
        if (transport is None or not transport.attached) and not self.run._aborted:
            return CONTINUE_ANSWER
        while True:
            held = self._open(gate, payload or {}, asyncio.get_running_loop())
            if held is None:
                return CONTINUE_ANSWER
            started = self.client._clock()
            try:
                answer = await held.wait_async(self.client.options.pause_timeout)
            except asyncio.CancelledError:
                # The task held here was cancelled (its caller gave up on the call): the gate is no
                # longer held, so the hub stops showing it (exec.resumed, by "cancelled").
                self.client._close_gate(self, held, GateAnswer(proto.CONTINUE, by="cancelled"), self.client._clock() - started)
                raise
            settled = self._settle(gate, held, answer, started, convert)
            if settled is None:
                continue
            if settled.action == proto.INJECT and asyncio.iscoroutine(settled.value):
                # An async converter (`async def from_injected`): a failure holds the gate again too.
                try:
                    value = await settled.value
                except Exception as exc:
                    self.injected = False
                    self._unusable(exc)
                    continue
                settled = dataclasses.replace(settled, value=value)
            return settled

    def before(self, convert: Callable[[Any], Any] = _identity) -> GateAnswer:
        return self.gate(proto.BEFORE, {"input": self.spec.input}, convert)

    async def abefore(self, convert: Callable[[Any], Any] = _identity) -> GateAnswer:
        return await self.agate(proto.BEFORE, {"input": self.spec.input}, convert)

    def after(self, output: Any, convert: Callable[[Any], Any] = _identity) -> GateAnswer:
        return self.gate(proto.AFTER, {"input": self.spec.input, "output": output}, convert)

    async def aafter(self, output: Any, convert: Callable[[Any], Any] = _identity) -> GateAnswer:
        return await self.agate(proto.AFTER, {"input": self.spec.input, "output": output}, convert)

    def error(self, exc: BaseException, convert: Callable[[Any], Any] = _identity) -> GateAnswer:
        return self.gate(proto.ERROR_GATE, {"input": self.spec.input, "error": describe_error(exc)}, convert)

    async def aerror(self, exc: BaseException, convert: Callable[[Any], Any] = _identity) -> GateAnswer:
        return await self.agate(proto.ERROR_GATE, {"input": self.spec.input, "error": describe_error(exc)}, convert)

    # ---- the whole node around a call ----------------------------------------------------------
