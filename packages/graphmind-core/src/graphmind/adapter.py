"""The module for adapter authors: everything an adapter uses of core, and nothing a user needs.

    from graphmind.adapter import NodeSpec, engine_for, parse_model_reply

    engine = engine_for(session)          # session: a graphmind.Client, or None for the default one
    if not engine.enabled:
        return client                     # a disabled client: patch nothing
    result = engine.execute(NodeSpec(name="step", kind="llm", input=...), lambda: real_call(),
                            describe_output=to_json, from_injected=to_framework_type)

See docs/adapters.md for the whole contract (hook points, the call and stream loops, `settle`,
injected values, the gate-matrix kit every adapter's tests run). An adapter imports only from here
(and `graphmind.testing` in its tests), never a private `graphmind._x` module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

from ._engine import NodeExecution
from ._errors import RunAborted
from ._gate import GateAnswer
from ._model_reply import ModelReply, ToolCallReply, parse_model_reply
from ._node import NodeSpec, Settled, describe_error
from ._run import RunContext
from ._steps import StepIdentity

if TYPE_CHECKING:
    from ._client import Client

__all__ = [
    "Engine",
    "GateAnswer",
    "ModelReply",
    "NodeExecution",
    "NodeSpec",
    "RunAborted",
    "RunContext",
    "Settled",
    "StepIdentity",
    "ToolCallReply",
    "describe_error",
    "engine_for",
    "parse_model_reply",
]

T = TypeVar("T")


def _identity(value: Any) -> Any:
    return value


class Engine:
    """The adapter-facing part of one client: nodes, runs, model-step identity, hints, warnings.

    Get it with `engine_for(session)`; it lives as long as its client and is cheap to ask for.
    """

    __slots__ = ("_client",)

    def __init__(self, client: Client) -> None:
        self._client = client

    @property
    def client(self) -> Client:
        """The client this engine reports to."""
        return self._client

    @property
    def enabled(self) -> bool:
        """False for a disabled client (kill switches): an adapter then patches nothing at all."""
        return self._client.enabled

    @property
    def live(self) -> bool:
        """Enabled and not disposed: a call made now becomes a node (else: call straight through)."""
        return self._client.live

    # ---- one node around one call ---------------------------------------------------------------
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
        return self._client.execute(
            spec,
            call,
            describe_output=describe_output or _identity,
            from_injected=from_injected or _identity,
            describe_usage=describe_usage,
            settle=settle,
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
        return await self._client.aexecute(
            spec,
            call,
            describe_output=describe_output or _identity,
            from_injected=from_injected or _identity,
            describe_usage=describe_usage,
            settle=settle,
        )

    # ---- a node the adapter drives itself -------------------------------------------------------
    def start_node(
        self,
        spec: NodeSpec,
        *,
        run: RunContext | None = None,
        parent_instance_id: str | None = None,
        line: Hashable | None = None,
    ) -> NodeExecution:
        """Starts one node (emits `node.started`); raises RunAborted when the run was aborted.

        `run` / `parent_instance_id` default to the calling context's; a framework that reports
        them itself (LangChain's run ids) passes them. `line`: for a call outside any run, what
        the loop streak belongs to (default: the calling thread / task); a framework whose
        top-level calls are separate runs of its own (a LangChain root run) names them."""
        return self._client.start_node(spec, run=run, parent_instance_id=parent_instance_id, line=line)

    async def astart_node(
        self, spec: NodeSpec, *, run: RunContext | None = None, parent_instance_id: str | None = None
    ) -> NodeExecution:
        """`start_node` from async code: a `wait_for_attach` wait awaits instead of blocking the loop."""
        return await self._client.astart_node(spec, run=run, parent_instance_id=parent_instance_id)

    async def await_attach(self) -> None:
        """With `wait_for_attach`, the first caller awaits the hub once; everyone else returns at once.

        For an adapter that drives gates from async callbacks without `astart_node` / `aexecute`."""
        await self._client.await_attach_once()

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
            ex = self._client.start_node(spec, run=run, parent_instance_id=parent_instance_id)
            if error is not None:
                ex.fail(error, **extra)
            else:
                ex.finish(output, **extra)
        except RunAborted:
            pass
        except Exception as exc:  # fail open: recording a provider's tool must not break the call
            self.warn(f"[graphmind] could not record the ungated node {spec.node_id}: {exc!r}", key="ungated")

    # ---- runs, identity, hints, warnings --------------------------------------------------------
    def begin_run(self, name: str, meta: dict[str, Any] | None = None) -> RunContext:
        """A run that starts in one callback and ends in another; end it with `end_run`."""
        return self._client.begin_run(name, meta)

    def end_run(self, run: RunContext, error: BaseException | None = None) -> None:
        """Ends a run from `begin_run`: finished, error (with `error`) or aborted."""
        self._client.end_run(run, error)

    def current_run(self) -> RunContext | None:
        """The run the calling code is inside, if any."""
        return self._client.current_run()

    def next_llm_step(self, first_message_key: str, prompt_length: int) -> StepIdentity:
        """The `llm:step` identity of a model call in the current run (docs/protocol.md, "Node identity").

        `first_message_key`: a stable text for the prompt's first message; `prompt_length`: its message count."""
        return self._client.next_llm_step(first_message_key, prompt_length)

    def hint(
        self,
        tools: list[dict[str, Any]],
        parent_instance_id: str | None = None,
        *,
        run: RunContext | None = None,
    ) -> None:
        """`graph.hint`: nodes that may run (a model's tool roster), drawn grey until they do."""
        self._client.hint(tools, parent_instance_id, run=run)

    def warn(self, message: str, key: str | None = None) -> None:
        """A rate-limited warning through the client's logger (an adapter's internal failures)."""
        self._client.warn(message, key)

    def new_instance_id(self) -> str:
        """A fresh node instance id, unique within the process."""
        return self._client._new_instance_id()


def engine_for(session: Client | None = None) -> Engine:
    """The engine of `session`, or of the process-wide default client when None."""
    if session is None:
        from . import get_client

        session = get_client()
    engine = session.__dict__.get("_adapter_engine")
    if engine is None:
        engine = session.__dict__["_adapter_engine"] = Engine(session)
    return engine
