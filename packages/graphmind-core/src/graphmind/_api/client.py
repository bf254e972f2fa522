"""The client: options, the event path, and the parts it owns and wires together.

```
Client ─┬─ Runs          (_runs/events.py)         run.started / run.finished, the run of the calling code
        ├─ HubControl    (_hub/control.py)         the connection, held gates, frames from the hub
        ├─ TokenFlusher  (_node/token_flusher.py)  streamed tokens no later delta sends
        ├─ Transport     (_wire/transport.py)      the WebSocket thread and the replay ring
        └─ Engine        (_node/engine.py)         what adapters use: nodes, the call and stream loops
```

Each part gets what it needs when it is built (the event path, the clock, a way to find a run);
none of them imports this module. The user API (`run`, `tool`, `wrap`, `span`, `ready`, `stats`,
`dispose`) is here; what only an adapter needs is the Engine (`graphmind.adapter.engine_for`).
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
from collections.abc import Callable, Iterator, Mapping
from time import time_ns as _time_ns
from typing import TYPE_CHECKING, Any, TypeVar, overload

from .. import protocol as proto
from .._base.ids import random_hex
from .._base.warn import Warner
from .._config.options import Options
from .._effects.setup import build_effects
from .._events.pipeline import EventPipeline
from .._events.redaction import resolve_redaction_switches
from .._hub.attach_wait import AttachWait, AttachWaitPolicy
from .._hub.attach_wait import env_problem as attach_wait_env_problem
from .._hub.code_holds import client_breakpoints
from .._hub.control import HubControl
from .._hub.debug_state import DebugState
from .._hub.held_notice import HeldNotices, viewer_url
from .._loop.guard import LoopGuard, resolve_loop_guard_config
from .._node.engine import Engine
from .._node.hold_timeout import HoldTimeouts
from .._node.host import NodeHost
from .._node.token_flusher import TokenFlusher
from .._replay.settings import ENV as REPLAY_ENV
from .._replay.setup import build_replay
from .._replay.setup import command_line as _command_line
from .._runs.events import Runs
from .._runs.run import RunContext
from .._runs.tool_call_ids import ToolCallIds
from .._wire.transport import Transport
from .._wire.url import url_problem
from . import fork as _fork
from . import wrappers as _wrappers
from .run_scope import RunScope
from .span import Span

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .wrappers import ToolOptions

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class Client:
    """One GraphMind session: `graphmind.Client(app="support-agent", **options)`.

    Disabled (kill switches): wrappers return what they are given, no thread, no socket, no warning.
    Enabled and detached: gates continue at once; events wait in a replay buffer.
    """

    def __init__(
        self, app: str | None = None, *, environ: Mapping[str, str] | None = None, **options: Any
    ) -> None:
        env = os.environ if environ is None else environ
        self.options = Options.resolve(app, options, env)
        self.app = self.options.app
        self.enabled = self.options.enabled
        self._warn = Warner(self.options.logger)
        self.redaction_switches = resolve_redaction_switches(self.options.raw, env)
        self.loop_guard_config = resolve_loop_guard_config(self.options.raw.get("loop_guard"), env)
        self._disposed = False
        self._seq = itertools.count(1)
        self._emitted = 0
        self.client_id = random_hex()  # the shape of uuid4().hex; uuid costs ~5 ms to import (issue 37)
        # Instance ids: a random per-client prefix and a counter (uuid4 costs a syscall per call).
        self._instance_prefix = self.client_id[:8]
        self._instance_seq = itertools.count(1)
        self._transport: Transport | None = None
        key = str(id(self))
        clock = self.options.clock
        self._loop_guard = (
            LoopGuard(self.loop_guard_config, self._warn.always, mask=self.options.mask)
            if self.enabled
            else None
        )
        forget = self._loop_guard.forget_run if self._loop_guard is not None else _ignore
        self._replay = replay = build_replay(self.options.raw.get("replay"), env) if self.enabled else None
        self._tap: Callable[[dict[str, Any]], None] | None = None  # the pytest plugin's recorder
        run_meta = self.options.meta
        if self.enabled and not self.redaction_switches.hide_inputs:
            run_meta = {**_command_line(), **run_meta}  # for the viewer's "Fork from here" command
        started_extra = replay.run_fields if replay is not None else None
        self._runs = Runs(
            self.app,
            run_meta,
            clock,
            self._emit,
            self._is_live,
            forget,
            key,
            started_extra,
            self.options.thread,
        )
        url_warning = url_problem(self.options.url, from_env=not options.get("url"))
        policy = AttachWaitPolicy.resolve(self.options.raw.get("wait_for_attach"), env, self.options.url)
        attach_wait = AttachWait(policy, self.options.url, self.options.connect_timeout)
        breakpoints = client_breakpoints(self.options.raw.get("breakpoints"))
        self._hub = HubControl(self._warn, self._emit, self._runs.find, breakpoints)
        self._effects = effects = build_effects(self.options.raw, env, replay)
        self._hub.safe_applied = effects.applied
        if replay is not None and env.get(REPLAY_ENV):  # `graphmind replay`, not a test's replay=
            self._hub.held_notices = HeldNotices(viewer_url(self.options.url))
        flusher = TokenFlusher(self.options.token_flush_interval * 1000.0, self._warn, self._is_disposed)
        self._flusher = flusher
        self._attach_wait = attach_wait
        current_node: contextvars.ContextVar[str | None] = contextvars.ContextVar(
            f"graphmind_node_{key}", default=None
        )
        self._host = host = NodeHost(
            emit=self._emit,
            clock=clock,
            warn=self._warn,
            hub=self._hub,
            flusher=flusher,
            current_node=current_node,
            new_instance_id=self._new_instance_id,
            live=self.enabled,
            token_flush_ms=self.options.token_flush_interval * 1000.0,
            pause_timeout=self.options.pause_timeout,
            tool_calls=ToolCallIds(key),
            hold_timeouts=HoldTimeouts(self._warn.always),
            redaction=self.redaction_switches,
            replay=replay,
            effects=effects,
        )
        self._engine = Engine(
            enabled=self.enabled,
            host=host,
            runs=self._runs,
            hub=self._hub,
            loop_guard=self._loop_guard,
            loop_guard_config=self.loop_guard_config,
            redaction=self.redaction_switches,
            attach_wait=attach_wait,
            key=key,
        )
        if not self.enabled:
            return
        self._pipeline = EventPipeline(self.redaction_switches, self._warn, mask=self.options.mask)
        host.scrub = self._pipeline.process  # a replay's divergence text shows values as events do
        for problem in (url_warning, attach_wait_env_problem(env)):
            if problem:
                self._warn.always(problem)
        if url_warning:  # detached for good: no transport, gates continue, nothing is buffered
            attach_wait.pending = False
            return
        self._transport = self._new_transport()
        _fork.track(self)

    def _new_transport(self) -> Transport:
        transport = self._hub.transport = Transport(
            self.options,
            self.client_id,
            on_attach=self._hub.on_attach,
            on_frame=self._hub.on_frame,
            on_detach=self._hub.on_detach,
            warn=self._warn,
            on_exit=self.dispose,
        )
        transport.dropped_elsewhere = lambda: self._pipeline.dropped
        transport.hello_extra[proto.SAFE_FIELD] = self._effects.hello()
        return transport

    def _after_fork(self) -> None:
        """In a forked child (fork.py): its own clientId, seqs, ring and connection; the parent's
        transport (its socket, its ring, its threads that do not exist here) is dropped untouched."""
        if self._disposed or self._transport is None:
            return
        self.client_id = random_hex()  # the shape of uuid4().hex; uuid costs ~5 ms to import (issue 37)
        self._instance_prefix = self.client_id[:8]
        self._seq = itertools.count(1)
        self._emitted = 0
        self._pipeline.dropped = 0
        self._hub.after_fork()
        self._flusher.after_fork()
        self._attach_wait.after_fork()
        self._transport = self._new_transport()

    # ---- state -------------------------------------------------------------------------------
    def _new_instance_id(self) -> str:
        return f"{self._instance_prefix}-{next(self._instance_seq):x}"

    def _is_live(self) -> bool:
        return self.enabled and not self._disposed

    def _is_disposed(self) -> bool:
        return self._disposed

    @property
    def live(self) -> bool:
        return self.enabled and not self._disposed

    @property
    def attached(self) -> bool:
        return self._hub.attached

    @property
    def debug_state(self) -> DebugState:
        return self._hub.debug

    def current_run(self) -> RunContext | None:
        """The run the calling code is inside, if any."""
        return self._runs.current.get()

    # ---- events ------------------------------------------------------------------------------
    def _emit(
        self,
        event: dict[str, Any],
        trusted: bool = False,
        owned: bool = False,
        payload: tuple[str, ...] | None = None,
        measured: int = 0,
    ) -> int:
        """Numbers, redacts and buffers one event (in the calling thread). Returns its seq.

        The JSON text is written by the transport thread when the event is sent: a detached app
        never pays for encoding what no debugger reads. `trusted`: built by the gate engine for a
        node whose identity strings are ASCII; `owned`: its payload built by an adapter that owns it
        (see EventPipeline.process); `payload`: the payload fields of an engine-built event
        (EventPipeline.process_sized), and `measured` the JSON characters of those it leaves out."""
        seq = next(self._seq)
        if self._transport is None or self._disposed:
            return seq
        event["seq"] = seq
        event["ts"] = _time_ns() / 1_000_000  # _clock.wall_ms, inlined: one call less per event
        try:
            pipeline = self._pipeline
            sized = pipeline.process_sized(event, trusted, owned, payload, measured)
        except Exception as exc:  # the pipeline promises never to raise; stay fail-open if it ever does
            self._pipeline.dropped += 1  # lost: counted in stats()["dropped"] like any other
            self._warn(f"[graphmind] dropped an event that could not be recorded: {exc!r}", key="encode")
            return seq
        if sized is None:
            return seq
        self._emitted += 1
        self._transport.enqueue(sized[0], sized[1])
        if self._tap is not None:
            self._tap(sized[0])
        return seq

    # ---- the user API ------------------------------------------------------------------------
    def run(self, name: str, meta: dict[str, Any] | None = None, *, thread: Any = None) -> RunScope:
        """A run boundary: `with client.run("name") as run:`, `async with`, or `@client.run("name")`.

        `thread`: the conversation or session this run is one turn of (a string; the viewer shows a
        thread's runs as one transcript); default: `configure(thread=...)`, else GRAPHMIND_THREAD."""
        return RunScope(self._parts, name, meta, thread)

    def _parts(self) -> tuple[Engine, Runs]:
        return self._engine, self._runs

    def wrap(self, fn: F, name: str | None = None, **options: Unpack[ToolOptions]) -> F:
        """A gated version of `fn`, producing a `tool:<name>` node per call.

        `breakpoint`: hold at that gate (True or "before", "after", "error", or several) whenever a
        hub is attached; `hold_if`: a callable given the call's arguments as keyword arguments,
        returning a bool or a reason string, checked at the before gate (_hub/code_holds.py);
        `effects` ("read" / "write") and `effects_stub`: docs/effects.md."""
        return _wrappers.wrap(self._engine, fn, name, **options)

    @overload
    def tool(self, name: F) -> F: ...
    @overload
    def tool(self, name: str | None = None, **options: Unpack[ToolOptions]) -> Callable[[F], F]: ...

    def tool(self, name: Any = None, **options: Unpack[ToolOptions]) -> Any:
        """`@client.tool`, `@client.tool()`, `@client.tool("search")`, `@client.tool(name="search")`,
        `@client.tool(breakpoint="before")`, `@client.tool(hold_if=lambda amount, **_: amount > 100)`,
        `@client.tool(effects="write")`."""
        return _wrappers.tool(self._engine, name, **options)

    def wrap_tools(self, tools: T, **options: Unpack[ToolOptions]) -> T:
        """Wraps a `{name: callable}` dict (keys name the nodes), a list, or one callable; same shape back.
        The options apply to each tool."""
        return _wrappers.wrap_tools(self._engine, tools, **options)

    def wrap_method(
        self, obj: Any, method_name: str, name: str | None = None, **options: Unpack[ToolOptions]
    ) -> Any:
        """Gates one method of one object, in place (other instances are untouched). Returns `obj`."""
        return _wrappers.wrap_method(self._engine, obj, method_name, name, **options)

    def unwrap_method(self, obj: Any, method_name: str) -> Any:
        """Undoes `wrap_method`. Returns `obj`."""
        return _wrappers.unwrap_method(obj, method_name)

    def span(self, name: str, kind: str = "custom", input: Any = None) -> Span:
        """A node the code describes itself: `with client.span("retrieve", kind="retriever") as s: s.output = ...`."""
        return Span(self._engine, name, kind, input)

    @contextlib.contextmanager
    def tool_call(self, call_id: str) -> Iterator[None]:
        """Names the tool node started directly inside this block after the model's tool call id.

        `with gm.tool_call(call.id): tools[call.function.name](**args)` links the model step that asked
        for the call to the tool node that ran it (the tool node's instanceId is the call id).
        """
        engine = self._engine
        token = engine.tool_call_id.set((call_id, engine.current_parent()))
        try:
            yield
        finally:
            engine.tool_call_id.reset(token)

    # ---- attach guarantee, stats, dispose ----------------------------------------------------
    def ready(self, timeout: float = 2.0) -> bool:
        """Connects now and waits for the hub's welcome. False means "carry on detached"; never raises."""
        if not self.live:
            return False
        return self._hub.ready(_wait_bound(timeout))

    async def aready(self, timeout: float = 2.0) -> bool:
        if not self.live:
            return False
        return await self._hub.aready(_wait_bound(timeout))

    def stats(self) -> dict[str, Any]:
        transport = self._transport
        counters = dict(transport.counters) if transport else {}
        return {
            "app": self.app,
            "enabled": self.enabled,
            "attached": self.attached,
            "url": self.options.url,
            "clientId": self.client_id,
            "events": self._emitted,
            "buffered": transport.buffered_count if transport else 0,
            # Events lost: fallen out of the ring unsent, or unreadable by the pipeline.
            "dropped": transport.dropped_count + self._pipeline.dropped if transport else 0,
            # Sent, but the hub had not confirmed storing them when the client closed (most
            # likely stored: a busy hub answers late). Not in "dropped": they are not known lost.
            "unconfirmed": counters.get("unconfirmed", 0),
            "sent": counters.get("sent", 0),
            "unsent": transport.unsent_count if transport else 0,
            "connects": counters.get("connects", 0),
            "held": self._hub.held_count,
            "activeRuns": self._runs.count,
            "warnings": self._warn.count,
        }

    def dispose(self) -> None:
        """Finishes the implicit run, releases held gates with continue, flushes and closes the socket."""
        if self._disposed or self._transport is None:
            self._disposed = True
            self._host.live = False
            return
        self._runs.finish_implicit()
        self._hub.release_all(proto.CONTINUE, "dispose")
        self._disposed = True
        self._host.live = False  # what the engine and every node read (NodeHost.live)
        self._transport.close()  # waits while the hub keeps taking events; reports what it could not send

    async def adispose(self) -> None:
        import asyncio  # imported already (a coroutine of it runs): not with `import graphmind`

        await asyncio.get_running_loop().run_in_executor(None, self.dispose)

    def __repr__(self) -> str:
        state = "disabled" if not self.enabled else ("attached" if self.attached else "detached")
        return f"<graphmind.Client app={self.app!r} {state}>"


READY_MAX_S = 86_400.0


def _wait_bound(timeout: Any) -> float:
    """ready()'s timeout as a wait the clock can keep: NaN (which never compared past the deadline
    and spun a core forever), a negative or a non-number waits 0; infinity waits a day."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
        return 0.0
    return float(min(timeout, READY_MAX_S))


def _ignore(_run_id: str) -> None:
    return None
