"""One node execution: its identity, its events, its streamed tokens, its gates and its timing.

`NodeRecord` is everything a node is and does gate by gate (`NodeHost`: what all nodes of one
client share); `engine.NodeExecution` adds the call and stream loops (call_loop.py,
stream_loop.py) on top. A gate's answer is decided in one place, `_node/decide.py`, for sync and
async alike: the two gate twins only wait (or await) around it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .. import protocol as proto
from .._base.clock import round_ms
from .._base.errors import RunAborted
from .._hub.code_holds import CONDITION_REASON
from .._hub.gate import GateAnswer, HeldGate, async_waiter
from .._replay.gate import areplay_before, replay_before
from .._runs.agents import NO_AGENT, AgentPath
from .._runs.tool_call_ids import calls_of
from .decide import CONTINUE_ANSWER, decide, normalized
from .edit import UNSET, edited_fields, keep_output, paused_fields
from .host import NodeHost
from .spec import describe_error
from .tokens import NO_TOKENS, TokenBuffer

if TYPE_CHECKING:  # annotations only
    from .._runs.run import RunContext
    from .hold_timeout import HoldWatch
    from .spec import NodeSpec

# What a node's flow (call_loop.py, stream_loop.py) asks of its driver: (GATE, gate, payload) ->
# the GateAnswer of `NodeRecord.gate` / `agate`; each loop adds its own requests.
GATE = "gate"
Request = tuple[Any, ...]
# The payload fields of a node's own events (EventPipeline.process_sized's `payload`).
_STARTED: tuple[str, ...] = ("input",)
_STARTED_ATTRS: tuple[str, ...] = ("input", "attrs")
_ATTRS: tuple[str, ...] = ("attrs",)  # the input measured already (NodeSpec.input_chars)
_FINISHED: tuple[str, ...] = ("output",)
_FINISHED_USAGE: tuple[str, ...] = ("output", "usage")


def _identity(value: Any) -> Any:
    return value


class NodeRecord(TokenBuffer):
    """One execution of one node: its events, its gates, its timing."""

    def __init__(self, host: NodeHost, spec: NodeSpec, run: RunContext, parent: str | None) -> None:
        self.host = host
        self.spec = spec
        self.run = run
        self.node_id: str = spec.node_id or f"{spec.kind}:{spec.name}"
        self.instance_id = spec.instance_id or host.new_instance_id()
        self.parent_instance_id = parent
        self.started_at = host.clock()
        self.held_ms = 0.0
        self.injected = self.replayed = False  # replayed: the ending came from a recording (docs/replay.md)
        self.ended = False
        self.loop_hit: Any = None
        self.hold_why: str | None = None  # a hold_if verdict: None = not asked yet, "" = no hold
        # Attempts, edits and refusals (_node/edit.py): the attempt number and when it began, the
        # input before the first edit, why the last answer was refused (the re-hold says it).
        self.attempt = 1
        self.attempt_started = self.started_at
        self.original_input: Any = UNSET
        self.refused: str | None = None
        self._hold_watch: HoldWatch | None = None  # a held gate's known-timeout timer
        self._deltas: list[dict[str, Any]] = []
        self._last_flush = self.started_at
        try:  # one check per node lets the pipeline skip the identity fields of its events
            self.trusted = (
                self.node_id + spec.kind + spec.name + self.instance_id + (parent or "") + run.run_id
            ).isascii()
        except TypeError:  # a name that is not a str: the pipeline reads every field
            self.trusted = False
        self._token_lock = NO_TOKENS  # replaced by a real lock on the first delta (see token())

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

    agent_path: AgentPath = NO_AGENT  # the agents the node ran in (_runs/agents.py), outermost first

    def with_agent(self, path: AgentPath) -> None:
        """The node ran in agent `path[-1]`: its `node.started` says so (`agent`, `agentPath`)."""
        self.agent_path = path
        if self.trusted and not all(name.isascii() for name in path):
            self.trusted = False  # the pipeline reads every field, as for a non-ASCII name

    def emit_started(self) -> int:
        spec = self.spec  # `_base` and its fields in one literal (every node starts here)
        event = {
            "type": proto.NODE_STARTED,
            "runId": self.run.run_id,
            "nodeId": self.node_id,
            "instanceId": self.instance_id,
            "kind": spec.kind,
            "name": spec.name,
            "parentInstanceId": self.parent_instance_id,
            "input": spec.input,
        }
        payload: tuple[str, ...] | None = _STARTED
        measured = spec.input_chars
        if measured is not None:  # its describer measured it: the pipeline need not visit it
            payload = ()
        if spec.attrs:
            event["attrs"] = spec.attrs
            payload = _STARTED_ATTRS if measured is None else _ATTRS
        if self.agent_path:
            event["agent"] = self.agent_path[-1]
            event["agentPath"] = list(self.agent_path)
        if spec.extra:
            event.update(spec.extra)
            payload = None  # keys of the adapter's: the pipeline looks at each
        return self.host.emit(event, self.trusted, spec.owned, payload, 0 if measured is None else measured)

    @contextmanager
    def active(self) -> Iterator[None]:
        """Marks this execution as the parent of nodes started inside it."""
        token = self.host.current_node.set(self.instance_id)
        try:
            yield
        finally:
            self.host.current_node.reset(token)

    def warn(self, message: str, key: str | None = None) -> None:
        """A rate-limited warning through the client's logger (an adapter's internal failures)."""
        self.host.warn(message, key=key)

    # ---- endings --------------------------------------------------------------------------------
    def finish(
        self,
        output: Any = None,
        *,
        usage: dict[str, Any] | None = None,
        cut_short: bool = False,
        owned: bool = False,
        **extra: Any,
    ) -> None:
        """`owned`: the adapter built `output` and `usage` as `NodeSpec.owned` says of the input."""
        if self.ended:
            return
        if self._deltas:  # most nodes streamed nothing: no call
            self.flush_tokens()
        self.ended = True
        spec = self.spec
        if spec.edit is not None:  # this execution's hook, which may close over it: no cycle left behind
            spec.edit = None
        host = self.host
        # `_base` in one literal (every node finishes here); round(…, 2) is _clock.round_ms inlined
        event = {
            "type": proto.NODE_FINISHED,
            "runId": self.run.run_id,
            "nodeId": self.node_id,
            "instanceId": self.instance_id,
            "kind": spec.kind,
            "name": spec.name,
            "output": output,
            "durationMs": round(host.clock() - self.started_at, 2),
            "heldMs": round(self.held_ms, 2) if self.held_ms else self.held_ms,  # round(): ~0.3 µs
        }
        payload: tuple[str, ...] | None = _FINISHED
        if self.injected or self.replayed:  # a value from the debugger, or from a replay's recording
            event["replayed" if self.replayed else "injected"] = True
        if usage is not None:
            event["usage"] = usage
            payload = _FINISHED_USAGE
        if cut_short:
            event["cutShort"] = True
        if extra or self.replayed or self.original_input is not UNSET:
            payload = None  # keys the engine does not always write: the pipeline looks at each
            if extra:
                event.update(extra)
            if self.original_input is not UNSET:
                event.update(edited_fields(self))
        host.emit(event, self.trusted, owned, payload)
        if host.hub.transport is not None and host.hub.transport.attached:
            keep_output(self, output)  # the inject box's prefill at this node's next hold
        if spec.tool_calls_in_output:
            host.tool_calls.expect(self.run, self.parent_instance_id or self.run.run_id, calls_of(output))

    def fail(self, exc: BaseException, **extra: Any) -> None:
        if self.ended:
            return
        self.flush_tokens()
        self.ended = True
        if self.spec.edit is not None:  # as in finish: no cycle left behind
            self.spec.edit = None
        event = self._base(proto.NODE_ERROR)
        event["error"] = describe_error(exc)
        event["durationMs"] = round_ms(self.host.clock() - self.started_at)
        event["heldMs"] = round_ms(self.held_ms)
        event.update(extra)
        if self.original_input is not UNSET:
            event.update(edited_fields(self))
        self.host.emit(event, self.trusted)
        if self.spec.tool_calls_in_output:
            # a failed step asked for nothing
            self.host.tool_calls.expect(self.run, self.parent_instance_id or self.run.run_id, [])

    # ---- gates ---------------------------------------------------------------------------------
    def wants_hold(self, gate: str) -> bool:
        """Would this gate hold now? Streaming adapters ask before deciding to buffer a stream."""
        return self._hold_reason(gate, consume=False) is not None

    def _hold_reason(self, gate: str, consume: bool = True) -> str | None:
        return self.host.hub.hold_reason(self, gate, consume)

    def gate_needed(self, gate: str) -> bool:
        """Can passing `gate` now hold or raise (an aborted run)? False on the fast paths: the loops skip it."""
        transport = self.host.hub.transport
        if transport is None or not transport.attached:
            return self.run._aborted
        return self.run._aborted or self._hold_reason(gate, consume=False) is not None

    def may_hold(self) -> bool:
        """False on the fast path: detached, and the run not aborted (no gate can hold or raise)."""
        transport = self.host.hub.transport
        return (transport is not None and transport.attached) or self.run._aborted

    def _open(self, gate: str, payload: dict[str, Any], is_async: bool) -> HeldGate | None:
        if self.run._aborted:
            error = RunAborted(self.run.run_id)
            self.fail(error)
            raise error
        reason = self._hold_reason(gate)
        if reason is None:
            return None
        self.flush_tokens()
        actions = list(proto.LOOP_BEFORE_ACTIONS if reason == "loop" else proto.GATE_ACTIONS[gate])
        if self.spec.actions is not None:
            actions = [a for a in actions if a in self.spec.actions]
        paused = self._base(proto.EXEC_PAUSED)
        paused.update(gate=gate, reason=reason, actions=actions)
        paused.update(payload)
        paused.update(paused_fields(self, gate, payload, actions))
        if reason == "loop" and self.loop_hit is not None:
            paused["loop"] = self.loop_hit.as_wire()
        elif reason == CONDITION_REASON:
            paused["why"] = self.hold_why
        elif reason == "breakpoint" and self.host.hub.from_code(self.node_id, gate):
            paused["source"] = "code"  # the card says the hold came from the app's code
        # Which async library waits is asked only now that the gate holds (asyncio or trio).
        waiter = async_waiter() if is_async else None
        held = self.host.hub.open_gate(paused, self.run, gate, waiter, self.trusted)
        if self.spec.hold_timeout is not None:
            self._hold_watch = self.host.hold_timeouts.watch(self.node_id, gate, self.spec.hold_timeout)
        return held

    def _close(self, held: HeldGate, answer: GateAnswer, started: float) -> None:
        """The gate no longer holds: `exec.resumed` with how it was answered."""
        held_for = self.host.clock() - started
        self.held_ms += held_for
        self.host.hub.close_gate(held)
        if self._hold_watch is not None:
            self._hold_watch.stop()
            self._hold_watch = None
        resumed = self._base(proto.EXEC_RESUMED)
        resumed.update(
            gateId=held.gate_id, gate=held.gate, action=answer.action, heldMs=round_ms(held_for), by=answer.by
        )
        self.host.emit(resumed, self.trusted)

    def _decide(
        self,
        gate: str,
        held: HeldGate,
        answer: GateAnswer,
        started: float,
        convert: Callable[[Any], Any],
        payload: dict[str, Any],
    ) -> GateAnswer | None:
        """The gate no longer holds; its answer is decided in the one place (_node/decide.py)."""
        answer = normalized(self, answer)
        self._close(held, answer, started)
        return decide(self, gate, held, answer, started, convert, payload)

    def _unusable(self, exc: BaseException, what: str = "inject") -> None:
        """An answer the gate cannot take: warned, and said on the re-hold (`exec.paused.refused`)."""
        if what == "edit":
            self.refused = str(exc)
            message = f"[graphmind] the answer at {self.node_id} was refused: {exc}; the gate is held again."
        else:
            self.refused = f"the injected value could not be used ({type(exc).__name__}: {exc})"
            message = (
                f"[graphmind] {self.refused.replace('the injected value', f'the injected value for {self.node_id}')}; "
                "the gate is held again: inject a value of the right shape, or continue."
            )
        self.host.warn(message, key=f"{what}-{self.node_id}")

    def gate(
        self, gate: str, payload: dict[str, Any] | None = None, convert: Callable[[Any], Any] = _identity
    ) -> GateAnswer:
        """Passes one gate from sync code. Raises RunAborted on abort; an inject answer carries the converted value."""
        if self.host.replay is not None and (replayed := replay_before(self, gate, convert)):
            return replayed  # a replay answered the before gate (docs/replay.md)
        if not self.may_hold():
            return CONTINUE_ANSWER  # detached: nothing can hold (docs/architecture.md, "The gate engine")
        payload = payload or {}
        while True:
            held = self._open(gate, payload, False)
            if held is None:
                return CONTINUE_ANSWER
            started = self.host.clock()
            try:
                answer = held.wait(self.host.pause_timeout)
            except BaseException:
                # The thread held here was interrupted (KeyboardInterrupt, or another exception a
                # signal handler raised: pytest-timeout's): as a cancelled task in `agate`.
                self._close(held, GateAnswer(proto.CONTINUE, by="cancelled"), started)
                raise
            decided = self._decide(gate, held, answer, started, convert, payload)
            if decided is not None:
                return decided

    async def agate(
        self, gate: str, payload: dict[str, Any] | None = None, convert: Callable[[Any], Any] = _identity
    ) -> GateAnswer:
        """Passes one gate from async code (asyncio or trio) without blocking the event loop.

        `convert` may be a coroutine function here (an adapter that must await to build its type).
        """
        if self.host.replay is not None and (replayed := await areplay_before(self, gate, convert)):
            return replayed  # a replay answered the before gate (docs/replay.md)
        if not self.may_hold():
            return CONTINUE_ANSWER
        payload = payload or {}
        while True:
            held = self._open(gate, payload, True)
            if held is None:
                return CONTINUE_ANSWER
            started = self.host.clock()
            try:
                answer = await held.wait_async(self.host.pause_timeout)
            except BaseException:
                # The task held here was cancelled (asyncio or trio: its caller gave up on the call):
                # the gate no longer holds, so the hub stops showing it (exec.resumed, by "cancelled").
                self._close(held, GateAnswer(proto.CONTINUE, by="cancelled"), started)
                raise
            decided = self._decide(gate, held, answer, started, convert, payload)
            if decided is not None and decided.injects and isinstance(decided.value, Coroutine):
                # An async converter (`async def from_injected`): a failure holds the gate again too.
                try:
                    decided = dataclasses.replace(decided, value=await decided.value)
                except Exception as exc:
                    self.injected = False
                    self._unusable(exc)
                    decided = None
            if decided is not None:
                return decided
