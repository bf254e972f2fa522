"""The gate engine: one node executor for every adapter (docs/architecture.md, "The gate engine").

```
started ─► before gate ─► body ─► after gate ─► finished
              │ inject: skip body       │ inject: replace result
              │ abort: RunAborted       │ retry: run body again
              ▼                         ▼
                     error gate (body raised)
   continue: re-raise · inject: return value · retry: run body again · abort
```

`Engine` is the adapter-facing part of one client (`graphmind.adapter.engine_for`): it starts
nodes, runs a call as one node (`execute` / `aexecute`), begins and ends runs, names model steps,
hints and warns. `NodeExecution` is one node: its events and gates (record.py), its call and stream
loops (call_loop.py, stream_loop.py) and the single gates an adapter that drives a framework's own
callbacks passes itself. Nothing here knows about any framework.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from .. import protocol as proto
from .._base.errors import RunAborted
from .._effects.setup import classify_or_unknown
from .._events.redaction import RedactionSwitches
from .._hub.attach_wait import AttachWait, in_worker_thread, loop_running_here
from .._hub.control import HubControl
from .._loop.guard import LoopGuard, LoopGuardConfig, cannot_hold
from .._runs.agents import AGENT_PATH, node_identity
from .._runs.events import Runs
from .._runs.run import RunContext
from .._runs.steps import StepIdentity, StepTracker
from .._runs.tool_call_ids import calls_from
from .call_loop import CallLoop
from .host import NodeHost
from .spec import NodeSpec, Settled, describe_error
from .stream_loop import StreamLoop

if TYPE_CHECKING:
    from .._hub.gate import GateAnswer

__all__ = ["Engine", "NodeExecution"]

T = TypeVar("T")


def _identity(value: Any) -> Any:
    return value


class NodeExecution(CallLoop, StreamLoop):
    """One execution of one node (adapters get it from `Engine.start_node`): its events and gates
    (`NodeRecord`), the loop around a call (`run_sync` / `run_async`) or a stream (`stream_sync` /
    `stream_async`), and single gates for an adapter that drives a framework's callbacks itself.
    A gate that cannot hold (detached) answers continue at once."""

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
        return await self.agate(
            proto.ERROR_GATE, {"input": self.spec.input, "error": describe_error(exc)}, convert
        )


class Engine:
    """The adapter-facing part of one client: nodes, runs, model-step identity, hints, warnings.

    Get it with `graphmind.adapter.engine_for(session)`; it lives as long as its client.
    """

    def __init__(
        self,
        *,
        enabled: bool,
        host: NodeHost,
        runs: Runs,
        hub: HubControl,
        loop_guard: LoopGuard | None,
        loop_guard_config: LoopGuardConfig,
        redaction: RedactionSwitches,
        attach_wait: AttachWait,
        key: str,
    ) -> None:
        self.enabled = enabled
        self._host = host
        self._runs = runs
        self._hub = hub
        self._loop_guard = loop_guard
        self._loop_config = loop_guard_config
        # The kinds the loop guard watches, read once (the config is frozen): start_node skips the
        # guard's call for every other kind, and for all of them when the guard is off.
        self._watched: frozenset[str] = (
            frozenset(loop_guard_config.kinds)
            if loop_guard is not None and loop_guard_config.enabled
            else frozenset()
        )
        self._redaction = redaction
        # Whether a loop hold's fingerprint is hidden (the switches are frozen: read once).
        self._hide_inputs = redaction.hide_inputs
        self._hide_args = redaction.hide_inputs or redaction.hide_tool_args
        # Asked by the loop guard only when a streak reaches its threshold.
        self._attached = lambda: hub.attached
        self._attach_wait = attach_wait
        # (call id, the node execution it was set under): see Client.tool_call().
        self.tool_call_id: contextvars.ContextVar[tuple[str, str | None] | None] = contextvars.ContextVar(
            f"graphmind_tool_call_{key}", default=None
        )

    @property
    def redaction_switches(self) -> RedactionSwitches:
        """What this client records less of (`hide_inputs`, `hide_tool_results`, ...)."""
        return self._redaction

    @property
    def live(self) -> bool:
        """Enabled and not disposed: a call made now becomes a node (else: call straight through)."""
        return self._host.live

    # ---- waiting for the hub once (`wait_for_attach`) -------------------------------------------
    def attach_once(self) -> None:
        """The first run or gated call waits for the hub once (_hub/attach_wait.py); others return at once.

        On a running event loop's thread (a sync hook inside async code) it never blocks: no probe,
        no wait; the connect starts in the transport's thread and the call carries on."""
        if self._attach_wait.pending:
            if loop_running_here():
                if self.live and self._attach_wait.claim():
                    self._hub.ready(0)  # starts the connect in the transport's thread; waits for nothing
                return
            seconds = self._attach_wait.take() if self.live else None
            if seconds:
                self._hub.ready(seconds)

    async def await_attach(self) -> None:
        """`attach_once` from async code: the probe and the wait run in a worker thread, the event
        loop keeps running (no socket call on its thread, issue 39)."""
        if self._attach_wait.pending and self.live:
            seconds = self._attach_wait.claim()
            if seconds:
                await in_worker_thread(lambda: self._attach_wait.listening() and self._hub.ready(seconds))

    # ---- nodes -----------------------------------------------------------------------------------
    def current_parent(self) -> str | None:
        """The instance id of the node the calling code runs inside, if any."""
        return self._host.current_node.get()

    def start_node(
        self,
        spec: NodeSpec,
        *,
        run: RunContext | None = None,
        parent_instance_id: str | None = None,
        line: Hashable | None = None,
    ) -> NodeExecution:
        """Starts one node execution (emits `node.started`); the adapter then drives its gates.

        `run` and `parent_instance_id` default to the calling context's (`client.run(...)` and the
        enclosing node); a framework that reports them itself (LangChain's run ids) passes them.
        `line`: for a call outside any run, what the loop streak belongs to (default: the calling
        thread / task); a framework whose top-level calls are separate runs of its own (a LangChain
        root run) names them (docs/protocol.md, "The loop streak").
        Raises RunAborted at once when the run was aborted.
        """
        if self._attach_wait.pending:
            self.attach_once()
        if run is None:  # Runs.for_call, its two common cases inlined: in a run, the implicit run
            runs = self._runs
            run = runs.current.get() or runs.implicit_run or runs.for_call()
        if run._aborted:
            raise RunAborted(run.run_id)
        host = self._host
        parent = parent_instance_id if parent_instance_id is not None else host.current_node.get()
        kind = spec.kind
        ungated = bool(spec.extra and spec.extra.get("ungated"))
        if kind == "tool" and not ungated:
            pending = self.tool_call_id.get()
            if spec.instance_id is None and pending is not None and pending[1] == parent:
                spec.instance_id = pending[0]
            # The id a model step asked this tool with (docs/protocol.md, "Tool node identity"); no
            # call at all until some model step reported its tool calls.
            if host.tool_calls.used:
                host.tool_calls.assign(run, parent or run.run_id, spec)
        path = AGENT_PATH.get()
        if path:  # the agent the calling code reported: core decides the id (_runs/agents.py)
            spec.node_id = node_identity(run, path, kind, spec.node_id or f"{kind}:{spec.name}")
        node = NodeExecution(host, spec, run, parent or run.run_id)
        if path:
            node.with_agent(path)
        if not host.live:
            return node
        if kind == "tool" and not ungated and host.effects is not None:
            node.effect = classify_or_unknown(host, spec)  # docs/effects.md
        seq = node.emit_started()
        if kind in self._watched and self._loop_guard is not None:
            node.loop_hit = self._loop_guard.watch(
                run.run_id,
                node.node_id,
                spec.name,
                spec.input,
                seq,
                # A node no gate can reach (a provider-executed tool) cannot be held at a streak:
                # the guard warns for it instead, as when detached.
                cannot_hold if ungated else self._attached,
                self._hide_args if kind == "tool" else self._hide_inputs,
                run.implicit,  # outside any run the streak is the line's / thread's / task's
                line,
                spec.owned,
                spec.input_chars is not None,
            )
        return node

    async def astart_node(
        self,
        spec: NodeSpec,
        *,
        run: RunContext | None = None,
        parent_instance_id: str | None = None,
        line: Hashable | None = None,
    ) -> NodeExecution:
        """`start_node` from async code: a `wait_for_attach` wait awaits instead of blocking the loop."""
        await self.await_attach()
        return self.start_node(spec, run=run, parent_instance_id=parent_instance_id, line=line)

    def observe_ungated(
        self,
        spec: NodeSpec,
        output: Any = None,
        *,
        error: BaseException | None = None,
        run: RunContext | None = None,
        parent_instance_id: str | None = None,
    ) -> None:
        """A node that already ran where no gate can reach it (a provider-executed tool, AI SDK page):
        `node.started` and `node.finished` (or `node.error`), both marked `ungated: true` plus
        `spec.extra` (e.g. `providerExecuted: true`). No gate opens; never raises (an aborted run or
        a failure to record only drops the node)."""
        extra = {"ungated": True, **(spec.extra or {})}
        spec.extra = extra
        try:
            node = self.start_node(spec, run=run, parent_instance_id=parent_instance_id)
            if error is not None:
                node.fail(error, **extra)
            else:
                node.finish(output, **extra)
        except RunAborted:
            pass
        except Exception as exc:  # fail open: recording a provider's tool must not break the call
            self.warn(f"[graphmind] could not record the ungated node {spec.node_id}: {exc!r}", key="ungated")

    def execute(
        self,
        spec: NodeSpec,
        call: Callable[[], T],
        *,
        describe_output: Callable[[Any], Any] | None = None,
        from_injected: Callable[[Any], Any] | None = None,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None = None,
        settle: Callable[[Any], Settled] | None = None,
    ) -> T:
        """Runs `call` as one gated node from sync code (before, after and error gates, retry,
        inject, abort). `settle`: the adapter's say on each result before the after gate (`Settled`)."""
        if not self._host.live:
            return call()
        return self.start_node(spec).run_sync(
            call, describe_output, from_injected or _identity, describe_usage, settle
        )

    async def aexecute(
        self,
        spec: NodeSpec,
        call: Callable[[], Awaitable[T]],
        *,
        describe_output: Callable[[Any], Any] | None = None,
        from_injected: Callable[[Any], Any] | None = None,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None = None,
        settle: Callable[[Any], Awaitable[Settled]] | None = None,
    ) -> T:
        """`execute` from async code: a hold awaits (the event loop keeps running); `settle` is async."""
        if not self._host.live:
            return await call()
        if self._attach_wait.pending:  # only the first call waits: the others skip a coroutine
            await self.await_attach()
        return await self.start_node(spec).run_async(
            call, describe_output, from_injected or _identity, describe_usage, settle
        )

    def expect_tool_calls(self, calls: Iterable[Any], *, run: RunContext | None = None) -> None:
        """A model step ended asking for these tool calls (`{"name", "id"}` mappings or `(name, id)`
        pairs, in the model's order; an empty list when it asked for none): the gated tool nodes
        started next in the run take their ids by name, in order (docs/protocol.md, "Tool node
        identity"). Each report replaces the previous step's calls no tool took. An adapter whose
        `llm:step` output has the described reply shape sets `NodeSpec(tool_calls_in_output=True)`
        instead. Never raises."""
        if not self._host.live:
            return
        try:
            run = run or self._runs.for_call()
            parent = self._host.current_node.get() or run.run_id
            self._host.tool_calls.expect(run, parent, calls_from(calls))
        except Exception as exc:  # fail open: identity is a nicety, the call is not
            self.warn(f"[graphmind] could not read the step's tool calls: {exc!r}", key="tool-calls")

    # ---- runs, identity, hints, warnings ---------------------------------------------------------
    def begin_run(self, name: str, meta: dict[str, Any] | None = None, thread: Any = None) -> RunContext:
        """A run that starts in one callback and ends in another; end it with `end_run`. `thread`:
        the framework's own conversation id, if it has one (_runs/thread.py)."""
        return self._runs.start(name, meta, thread)

    def end_run(self, run: RunContext, error: BaseException | None = None) -> None:
        """Ends a run from `begin_run`: finished, error (with `error`) or aborted."""
        self._runs.finish(run, error)

    def current_run(self) -> RunContext | None:
        """The run the calling code is inside, if any."""
        return self._runs.current.get()

    def next_llm_step(
        self, first_message_key: str, prompt_length: int, *, run: RunContext | None = None
    ) -> StepIdentity:
        """The `llm:step` identity of a model call in the current run (docs/protocol.md, "Model step identity").

        `first_message_key`: a stable text for the prompt's first message; `prompt_length`: its message count.
        `run`: as `start_node`'s, for a framework that reports its run itself (callbacks)."""
        if run is None:
            run = self._runs.for_call()
        path = AGENT_PATH.get()
        if not path or path[-1] == (run.root_agent or path[0]):
            return run.steps.next_step(first_message_key, prompt_length)
        tracker = run.agent_steps.get(path[-1])  # each agent's steps group into its own invocations
        if tracker is None:
            tracker = run.agent_steps.setdefault(path[-1], StepTracker())
        return tracker.next_step(first_message_key, prompt_length)

    def hint(
        self,
        nodes: list[dict[str, Any]],
        parent_instance_id: str | None = None,
        *,
        run: RunContext | None = None,
    ) -> None:
        """`graph.hint`: nodes that may run (a model's tool roster), drawn grey until they do."""
        if not self._host.live:
            return
        if run is None:
            run = self._runs.for_call()
        self._host.emit(
            {
                "type": proto.GRAPH_HINT,
                "runId": run.run_id,
                "nodes": nodes,
                "parentInstanceId": parent_instance_id or self._host.current_node.get() or run.run_id,
            },
            False,
        )

    def spec_or_none(
        self, kind: str, name: str, build: Callable[..., NodeSpec], *args: Any
    ) -> NodeSpec | None:
        """`build(*args)`, or None (warned, rate-limited) when describing the call failed, e.g. another
        thread changing the app's messages while they are read: the adapter then runs the call
        unrecorded, never broken by GraphMind (docs/reliability.md)."""
        try:
            return build(*args)
        except Exception as exc:
            self.warn(
                f"[graphmind] could not describe a request of {kind}:{name}, so the call runs unrecorded: {exc!r}",
                key="describe-request",
            )
            return None

    def warn(self, message: str, key: str | None = None) -> None:
        """A rate-limited warning through the client's logger (an adapter's internal failures)."""
        if self.enabled:
            self._host.warn(message, key=key)

    def new_instance_id(self) -> str:
        """A fresh node instance id, unique within the process."""
        return self._host.new_instance_id()
