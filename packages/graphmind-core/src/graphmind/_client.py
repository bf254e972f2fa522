"""The client: options, the event path, the debug state the hub pushed, held gates, runs."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import os
import threading
import uuid
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping
from typing import Any, TypeVar

from . import protocol as proto
from ._attach_wait import AttachWait, AttachWaitPolicy
from ._attach_wait import env_problem as attach_wait_env_problem
from ._clock import wall_ms
from ._code_holds import ConditionChecker, client_breakpoints
from ._config import Options
from ._debug_state import DebugState
from ._engine import NodeExecution
from ._errors import RunAborted
from ._gate import HeldGate
from ._hub_control import HubControl
from ._loop_guard import LoopGuard, resolve_loop_guard_config
from ._node import NodeSpec, Settled
from ._pipeline import EventPipeline
from ._redaction import resolve_redaction_switches
from ._run import RunContext
from ._run_events import RunEvents
from ._run_scope import RunScope
from ._span import Span
from ._steps import StepIdentity
from ._token_flusher import TokenFlusher
from ._transport import Transport
from ._url import url_problem
from ._warn import Warner
from ._wrappers import Wrappers

T = TypeVar("T")


def _identity(value: Any) -> Any:
    return value


class Client(Wrappers, RunEvents, HubControl, TokenFlusher):
    """One GraphMind session: `graphmind.Client(app="support-agent", **options)`.

    Disabled (kill switches): wrappers return what they are given, no thread, no socket, no warning.
    Enabled and detached: gates continue at once; events wait in a replay buffer.
    """

    def __init__(self, app: str | None = None, *, environ: Mapping[str, str] | None = None, **options: Any) -> None:
        env = os.environ if environ is None else environ
        self.options = Options.resolve(app, options, env)
        self.app = self.options.app
        self.enabled = self.options.enabled
        self._clock = self.options.clock
        self._token_flush_ms = self.options.token_flush_interval * 1000.0
        self._current_run: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar(
            f"graphmind_run_{id(self)}", default=None
        )
        self._current_node: contextvars.ContextVar[str | None] = contextvars.ContextVar(
            f"graphmind_node_{id(self)}", default=None
        )
        # (call id, the node execution it was set under): see tool_call().
        self._tool_call_id: contextvars.ContextVar[tuple[str, str | None] | None] = contextvars.ContextVar(
            f"graphmind_tool_call_{id(self)}", default=None
        )
        self._warn = Warner(self.options.logger)
        self.redaction_switches = resolve_redaction_switches(self.options.raw, env)
        self.loop_guard_config = resolve_loop_guard_config(self.options.raw.get("loop_guard"), env)
        self._disposed = False
        self._implicit_run: RunContext | None = None
        self._lock = threading.Lock()
        self._runs: dict[str, RunContext] = {}
        self._held: dict[str, HeldGate] = {}
        self._held_nodes: dict[str, NodeExecution] = {}
        self._pause_any = False
        self._pause_runs: set[str] = set()
        self._debug = DebugState()
        url_warning = url_problem(self.options.url, from_env=not options.get("url"))
        policy = AttachWaitPolicy.resolve(self.options.raw.get("wait_for_attach"), env, self.options.url)
        self._attach_wait = AttachWait(policy, self.options.url, self.options.connect_timeout)
        self._code_breakpoints = client_breakpoints(self.options.raw.get("breakpoints"))
        self._conditions = ConditionChecker(self._warn.always)
        self._seq = itertools.count(1)
        self._gate_seq = itertools.count(1)
        self.client_id = uuid.uuid4().hex
        # Instance ids: a random per-client prefix and a counter (uuid4 costs a syscall per call).
        self._instance_prefix = self.client_id[:8]
        self._instance_seq = itertools.count(1)
        self._emitted = 0
        self._transport: Transport | None = None
        self._token_pending: dict[str, NodeExecution] = {}
        self._token_wakeup = threading.Event()
        self._token_thread: threading.Thread | None = None
        if not self.enabled:
            return
        self._pipeline = EventPipeline(self.redaction_switches, self._warn, mask=self.options.mask)
        self._loop_guard = LoopGuard(self.loop_guard_config, self._warn.always)
        for problem in (url_warning, attach_wait_env_problem(env)):
            if problem:
                self._warn.always(problem)
        if url_warning:  # detached for good: no transport, gates continue, nothing is buffered
            self._attach_wait.pending = False
            return
        self._transport = Transport(
            self.options,
            self.client_id,
            on_attach=self._on_attach,
            on_frame=self._on_frame,
            on_detach=self._on_detach,
            warn=self._warn,
            on_exit=self.dispose,
        )

    # ---- state -------------------------------------------------------------------------------
    def _gate_ids(self) -> str:
        return f"g{next(self._gate_seq)}"

    def _new_instance_id(self) -> str:
        return f"{self._instance_prefix}-{next(self._instance_seq):x}"

    @property
    def debug_state(self) -> DebugState:
        return self._debug

    @property
    def live(self) -> bool:
        return self.enabled and not self._disposed

    def current_run(self) -> RunContext | None:
        """The run the calling code is inside, if any."""
        return self._current_run.get()

    # ---- events ------------------------------------------------------------------------------
    def _emit(self, event: dict[str, Any], trusted: bool = False) -> int:
        """Numbers, redacts and buffers one event (in the calling thread). Returns its seq.

        The JSON text is written by the transport thread when the event is sent: a detached app
        never pays for encoding what no debugger reads. `trusted`: built by the gate engine for a
        node whose identity strings are ASCII (see EventPipeline.process)."""
        seq = next(self._seq)
        if self._transport is None or self._disposed:
            return seq
        event["seq"] = seq
        event["ts"] = wall_ms()
        try:
            sized = self._pipeline.process_sized(event, trusted)
        except Exception as exc:  # the pipeline promises never to raise; stay fail-open if it ever does
            self._warn(f"[graphmind] dropped an event that could not be recorded: {exc!r}", key="encode")
            return seq
        if sized is None:
            return seq
        self._emitted += 1
        self._transport.enqueue(sized[0], sized[1])
        return seq

    # ---- runs --------------------------------------------------------------------------------
    def run(self, name: str, meta: dict[str, Any] | None = None) -> RunScope:
        """A run boundary: `with client.run("name") as run:`, `async with`, or `@client.run("name")`."""
        return RunScope(self, name, meta)

    # ---- nodes -------------------------------------------------------------------------------
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
        `line`: outside any run, the loop streak's line of execution (default: the thread / task).
        Raises RunAborted at once when the run was aborted.
        """
        if self._attach_wait.pending:
            self._wait_for_attach()
        if run is None:
            run = self._run_for_call()
        if run.aborted:
            raise RunAborted(run.run_id)
        parent = parent_instance_id if parent_instance_id is not None else self._current_node.get()
        if spec.instance_id is None and spec.kind == "tool":
            pending = self._tool_call_id.get()
            if pending is not None and pending[1] == parent:
                spec.instance_id = pending[0]
        ex = NodeExecution(self, spec, run, parent or run.run_id)
        if not self.live:
            return ex
        seq = ex._emit_started()
        config = self.loop_guard_config
        if config.enabled and spec.kind in config.kinds:
            switches = self.redaction_switches
            ex.loop_hit = self._loop_guard.observe(
                run_id=run.run_id,
                node_id=ex.node_id,
                kind=spec.kind,
                name=spec.name,
                args=spec.input,
                seq=seq,
                attached=self.attached,
                hide_fingerprint=switches.hide_inputs or (spec.kind == "tool" and switches.hide_tool_args),
                implicit=run.implicit,  # outside any run the streak is the line's / thread's / task's
                line=line,
            )
        return ex

    async def astart_node(
        self, spec: NodeSpec, *, run: RunContext | None = None, parent_instance_id: str | None = None
    ) -> NodeExecution:
        """`start_node` from asyncio code: a `wait_for_attach` wait awaits instead of blocking the loop."""
        await self.await_attach_once()
        return self.start_node(spec, run=run, parent_instance_id=parent_instance_id)

    def begin_run(self, name: str, meta: dict[str, Any] | None = None) -> RunContext:
        """Starts a run that no `with` block can span (it starts in one callback and ends in another).

        End it with `end_run`. Prefer `client.run(...)` wherever the run is one block of code.
        """
        return self._start_run(name, meta)

    def end_run(self, run: RunContext, error: BaseException | None = None) -> None:
        """Ends a run from `begin_run`: `finished`, `error` (with `error`) or `aborted`."""
        self._finish_run(run, error)

    def warn(self, message: str, key: str | None = None) -> None:
        """A rate-limited warning through this client's logger (adapters' internal failures)."""
        if self.enabled:
            self._warn(message, key=key)

    def execute(
        self,
        spec: NodeSpec,
        call: Callable[[], T],
        *,
        describe_output: Callable[[Any], Any] = _identity,
        from_injected: Callable[[Any], Any] = _identity,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None = None,
        settle: Callable[[Any], Settled] | None = None,
    ) -> T:
        """Runs `call` as one gated node from sync code (before, after and error gates, retry, inject, abort).

        `settle`: the adapter's say on each result before the after gate (see `Settled`).
        """
        if not self.live:
            return call()
        ex = self.start_node(spec)
        return ex.run_sync(call, describe_output, from_injected, describe_usage, settle)

    async def aexecute(
        self,
        spec: NodeSpec,
        call: Callable[[], Awaitable[T]],
        *,
        describe_output: Callable[[Any], Any] = _identity,
        from_injected: Callable[[Any], Any] = _identity,
        describe_usage: Callable[[Any], dict[str, Any] | None] | None = None,
        settle: Callable[[Any], Awaitable[Settled]] | None = None,
    ) -> T:
        """The same from asyncio code: a hold awaits, so the event loop keeps running (`settle` is async here)."""
        if not self.live:
            return await call()
        await self.await_attach_once()
        ex = self.start_node(spec)
        return await ex.run_async(call, describe_output, from_injected, describe_usage, settle)

    def span(self, name: str, kind: str = "custom", input: Any = None) -> Span:
        """A node the code describes itself: `with client.span("retrieve", kind="retriever") as s: s.output = ...`."""
        return Span(self, name, kind, input)

    @contextlib.contextmanager
    def tool_call(self, call_id: str) -> Iterator[None]:
        """Names the tool node started directly inside this block after the model's tool call id.

        `with gm.tool_call(call.id): tools[call.function.name](**args)` links the model step that asked
        for the call to the tool node that ran it (the tool node's instanceId is the call id).
        """
        token = self._tool_call_id.set((call_id, self._current_node.get()))
        try:
            yield
        finally:
            self._tool_call_id.reset(token)

    def next_llm_step(self, first_message_key: str, prompt_length: int) -> StepIdentity:
        """The `llm:step` identity of a model call in the current run (AI SDK page, "Node identity").

        `first_message_key`: a stable text for the prompt's first message; `prompt_length`: its message count.
        """
        return self._run_for_call().steps.next_step(first_message_key, prompt_length)

    def hint(
        self, nodes: list[dict[str, Any]], parent_instance_id: str | None = None, *, run: RunContext | None = None
    ) -> None:
        """`graph.hint`: nodes that may run (a model's tool roster), drawn grey until they do."""
        if not self.live:
            return
        if run is None:
            run = self._run_for_call()
        self._emit(
            {
                "type": proto.GRAPH_HINT,
                "runId": run.run_id,
                "nodes": nodes,
                "parentInstanceId": parent_instance_id or self._current_node.get() or run.run_id,
            }
        )

    # ---- attach guarantee, stats, dispose ----------------------------------------------------
    def ready(self, timeout: float = 2.0) -> bool:
        """Connects now and waits for the hub's welcome. False means "carry on detached"; never raises."""
        if not self.live or self._transport is None:
            return False
        try:
            return self._transport.ready(timeout)
        except Exception as exc:  # pragma: no cover - defensive
            self._warn(f"[graphmind] ready() failed: {exc!r}", key="ready")
            return False

    async def aready(self, timeout: float = 2.0) -> bool:
        if not self.live:
            return False
        if self.attached:
            return True
        return await asyncio.get_running_loop().run_in_executor(None, self.ready, timeout)

    def _wait_for_attach(self) -> None:
        """The first run or gated call waits for the hub once (_attach_wait.py); others return at once."""
        seconds = self._attach_wait.take() if self.live else None
        if seconds:
            self.ready(seconds)

    async def await_attach_once(self) -> None:
        """`_wait_for_attach` from asyncio code: the wait awaits instead of blocking the loop."""
        if self._attach_wait.pending:
            seconds = self._attach_wait.take() if self.live else None
            if seconds:
                await self.aready(seconds)

    def stats(self) -> dict[str, Any]:
        transport = self._transport
        counters = dict(transport.counters) if transport else {}
        with self._lock:
            held = len(self._held)
            runs = len(self._runs)
        return {
            "app": self.app,
            "enabled": self.enabled,
            "attached": self.attached,
            "url": self.options.url,
            "clientId": self.client_id,
            "events": self._emitted,
            "buffered": transport.buffered_count if transport else 0,
            # Events lost: fallen out of the ring unsent, or unreadable by the pipeline.
            "dropped": counters.get("dropped", 0) + (self._pipeline.dropped if transport else 0),
            "sent": counters.get("sent", 0),
            "unsent": transport.unsent_count if transport else 0,
            "connects": counters.get("connects", 0),
            "held": held,
            "activeRuns": runs,
            "warnings": self._warn.count,
        }

    def dispose(self) -> None:
        """Finishes the implicit run, releases held gates with continue, flushes and closes the socket."""
        if self._disposed or self._transport is None:
            self._disposed = True
            return
        if self._implicit_run is not None and self._implicit_run.started_ms:
            self._finish_run(self._implicit_run, None)
        self._release_all(proto.CONTINUE, "dispose")
        self._disposed = True
        self._transport.close()  # waits while the hub keeps taking events; reports what it could not send

    async def adispose(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.dispose)

    def __repr__(self) -> str:
        state = "disabled" if not self.enabled else ("attached" if self.attached else "detached")
        return f"<graphmind.Client app={self.app!r} {state}>"
