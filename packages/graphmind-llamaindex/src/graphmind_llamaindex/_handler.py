"""The observer on LlamaIndex's root dispatcher: spans and events as GraphMind nodes, never a hold.

The dispatcher calls every handler inside `try: ... except BaseException: pass`
(llama_index_instrumentation/dispatcher.py, Dispatcher.event / span_enter / span_exit / span_drop)
and only ever calls `event`, never `aevent`, from core's code: a handler can neither abort a call
nor hold without blocking the event loop. So this one only observes: nodes, parents, tokens,
usage, errors. Holding, injecting and retrying belong to `gate_tools` / `gate_llm`, whose node
this handler adopts (a gated call is one node, see _links.py).

A streamed LLM call's span ends when the generator is returned; its node ends on
`LLMChatEndEvent` (llama_index/core/llms/callbacks.py, wrapped_gen), which carries the span id.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import weakref
from typing import Any

from llama_index.core.instrumentation.events.exception import ExceptionEvent
from llama_index.core.instrumentation.events.llm import (
    LLMChatEndEvent,
    LLMChatInProgressEvent,
    LLMCompletionEndEvent,
    LLMCompletionInProgressEvent,
)

import graphmind
from graphmind.adapter import (
    Engine,
    KnownTimeout,
    NodeExecution,
    NodeSpec,
    RunAborted,
    RunContext,
    engine_for,
)

from . import _links as links
from ._describe import usage_of
from ._llm import remember_reply
from ._nodes import OBSERVED, llm_node, tool_spec
from ._roles import Role, llm_messages, method_of, role_of, tool_call_args
from ._team import AgentPath, Team, scoped


class _Link:
    """What the handler knows of one open span: its run, the node its children hang under, its own node."""

    __slots__ = (
        "agents",
        "ex",
        "last",
        "llm",
        "node",
        "owns_run",
        "role",
        "run",
        "team",
        "workflow",
        "workflow_started",
    )

    def __init__(
        self,
        run: RunContext | None,
        node: str | None,
        ex: NodeExecution | None = None,
        role: Role | None = None,
        owns_run: bool = False,
        llm: Any = None,
        workflow: Any = None,
        workflow_started: float | None = None,
        team: Team | None = None,
        agents: AgentPath = (),
    ) -> None:
        self.run = run
        self.node = node
        self.ex = ex
        self.role = role
        self.owns_run = owns_run
        self.llm = llm
        self.workflow = workflow  # the workflow whose run this span is inside (its steps are plain functions)
        self.workflow_started = workflow_started  # when that run began (time.monotonic): its timeout's start
        self.team = team  # the agents of that workflow run (_team.py)
        self.agents = agents  # the agent path the span's calls belong to
        self.last: Any = None  # a streamed LLM call's latest chunk (the reply so far)

    def child(self) -> _Link:
        """A span no row matches: transparent, its children hang under this span's node."""
        return _Link(
            self.run,
            self.node,
            workflow=self.workflow,
            workflow_started=self.workflow_started,
            team=self.team,
            agents=self.agents,
        )


def _step_owner(workflow: Any, method: str) -> Any:
    if workflow is None:
        return None
    return workflow if hasattr(getattr(type(workflow), method, None), "_step_config") else None


class Observer:
    def __init__(self, session: graphmind.Client | None) -> None:
        self._session = session
        self._spans: dict[str, _Link] = {}
        self._llms: dict[str, _Link] = {}  # LLM spans whose node ends on an End event

    def engine(self) -> Engine:
        # Looked up per call without a session: `graphmind.configure` may replace the default client.
        return engine_for(self._session)

    def context_of_span(self, span_id: str | None) -> tuple[RunContext | None, str | None]:
        link = self._spans.get(span_id) if span_id is not None else None
        return (link.run, link.node) if link is not None else (None, None)

    def agents_of_span(self, span_id: str | None) -> AgentPath:
        link = self._spans.get(span_id) if span_id is not None else None
        return link.agents if link is not None else ()

    def timeout_of_span(self, span_id: str | None) -> KnownTimeout | None:
        """The timeout of the workflow this span runs in: it keeps running while a gate holds
        (docs/timeouts.md). `Workflow._timeout` is set in Workflow.__init__ (workflows/workflow.py:165)
        and timed from the run's start, so the warning's deadline counts from there."""
        link = self._spans.get(span_id) if span_id is not None else None
        if link is None or link.workflow is None:
            return None
        seconds = getattr(link.workflow, "_timeout", None)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
            return None
        return KnownTimeout(
            float(seconds),
            f"the {type(link.workflow).__name__} workflow's timeout",
            "pass timeout=None to the workflow or agent",
            started=link.workflow_started,
        )

    def _fail_open(self, where: str, exc: BaseException) -> None:
        self.engine().warn(
            f"[graphmind] the LlamaIndex handler failed in {where} ({type(exc).__name__}: {exc}); "
            "the call goes on unobserved (GRAPHMIND_DISABLED=1 turns GraphMind off)",
            key=f"li-{where}",
        )

    # ---- spans ----------------------------------------------------------------------------------
    # The dispatcher calls these with keywords (Dispatcher.span_enter / span_exit / span_drop).
    def span_enter(
        self,
        id_: str,
        bound_args: inspect.BoundArguments,
        instance: Any = None,
        parent_id: str | None = None,
        tags: Any = None,
        **kwargs: Any,
    ) -> None:
        parent = self._spans.get(parent_id) if parent_id is not None else None
        mark = links.inside.get()
        if mark is not None and instance is mark.obj:  # the gated call's own span: its node is the gate's
            self._spans[id_] = _Link(mark.ex.run, mark.ex.instance_id)
            return
        if instance is None and parent is not None:
            # A workflow's @step reaches the dispatcher as a plain function (no instance, no `self`
            # among its arguments): it belongs to the workflow whose run span encloses it.
            instance = _step_owner(parent.workflow, method_of(id_))
        role = role_of(instance, method_of(id_)) if instance is not None else None
        if role is None:
            if parent is not None:
                self._spans[id_] = parent.child()
            return
        engine = self.engine()
        if not engine.live:
            return
        try:
            self._spans[id_] = self._open(engine, id_, role, bound_args, instance, parent)
        except RunAborted:
            # No node in an aborted run, but the span keeps its run: a gated call inside it
            # finds the aborted run and raises (the dispatcher swallows whatever we raise here).
            if parent is not None:
                self._spans[id_] = parent.child()
        except Exception as exc:
            self._fail_open("span_enter", exc)

    def _open(
        self,
        engine: Engine,
        id_: str,
        role: Role,
        bound: inspect.BoundArguments,
        instance: Any,
        parent: _Link | None,
    ) -> _Link:
        run = parent.run if parent is not None else engine.current_run()
        parent_node = parent.node if parent is not None else None
        if role.job == "agent" and run is None:  # a root agent or workflow is the run
            run = engine.begin_run(role.name(instance, "run"))
            return _Link(
                run,
                None,
                owns_run=True,
                workflow=instance,
                workflow_started=time.monotonic(),
                team=Team.of(instance),
            )
        agents = parent.agents if parent is not None else ()
        team = (
            Team.of(instance, agents)
            if role.job == "agent"
            else (parent.team if parent is not None else None)
        )
        if team is not None and role.kind == "chain":  # a workflow step: the agent it runs for
            agents = team.step(bound.arguments.get("ev"), agents)
            self._handoff(engine, team, bound.arguments.get("ev"), run, parent_node)
        with scoped(agents):
            if role.job == "llm":
                messages, kwargs = llm_messages(bound)
                spec, _ = llm_node(engine, run, instance, messages, kwargs, gated=False)
            elif role.job == "tool":
                args, kwargs = tool_call_args(bound)
                spec = tool_spec(instance, args, kwargs, run, gated=False)
                if team is not None:
                    team.tool_called(spec.name, kwargs)
            else:
                spec = NodeSpec(
                    role.name(instance, method_of(id_)),
                    role.kind,
                    role.describe_input(bound),
                    actions=OBSERVED,
                )
            ex = engine.start_node(spec, run=run, parent_instance_id=parent_node)
        started: float | None
        if role.job == "agent":
            workflow, started = instance, time.monotonic()
        else:
            workflow = parent.workflow if parent is not None else None
            started = parent.workflow_started if parent is not None else None
        link = _Link(
            ex.run,
            ex.instance_id,
            ex,
            role,
            llm=instance if role.job == "llm" else None,
            workflow=workflow,
            workflow_started=started,
            team=team,
            agents=agents,
        )
        if role.job == "llm":
            self._llms[id_] = link
        return link

    def _handoff(
        self, engine: Engine, team: Team, ev: Any, run: RunContext | None, parent_node: str | None
    ) -> None:
        """A step that starts the target of a `handoff` tool call: the handoff node (observed, _team.py)."""
        handed = team.handed(ev)
        if handed is None:
            return
        source, target, value = handed
        spec = NodeSpec(
            f"{source}->{target}", "handoff", value, attrs={"from": source, "to": target}, actions=OBSERVED
        )
        with scoped(team.path(source)):
            ex = engine.start_node(spec, run=run, parent_instance_id=parent_node)
        ex.finish(value)

    def span_exit(
        self, id_: str, bound_args: Any = None, instance: Any = None, result: Any = None, **kwargs: Any
    ) -> None:
        link = self._spans.pop(id_, None)
        if link is None:
            return
        try:
            if link.owns_run and link.run is not None:
                self.engine().end_run(link.run)
                links.forget(link.run.run_id)
            ex = link.ex
            if ex is None or ex.ended or link.role is None:
                return
            if link.role.job == "llm":
                if inspect.isgenerator(result) or inspect.isasyncgen(result):
                    # Ends on LLMChatEndEvent / LLMCompletionEndEvent, which only come when the
                    # stream is read to the end; a stream the app drops ends cut short instead.
                    weakref.finalize(result, self._abandoned, id_)
                    return
                self._llms.pop(id_, None)
                self._finish_llm(link, result)
                return
            ex.finish(link.role.describe_output(result))
        except Exception as exc:
            self._fail_open("span_exit", exc)

    def span_drop(
        self,
        id_: str,
        bound_args: Any = None,
        instance: Any = None,
        err: BaseException | None = None,
        **kwargs: Any,
    ) -> None:
        link = self._spans.pop(id_, None)
        self._llms.pop(id_, None)
        if link is None:
            return
        try:
            if link.ex is not None and not link.ex.ended:
                link.ex.fail(err or RuntimeError("span dropped"))
            if link.owns_run and link.run is not None:
                self.engine().end_run(link.run, err)
                links.forget(link.run.run_id)
        except Exception as exc:
            self._fail_open("span_drop", exc)

    # ---- events ---------------------------------------------------------------------------------
    def _finish_llm(self, link: _Link, response: Any) -> None:
        ex = link.ex
        if ex is None or ex.ended:
            return
        remember_reply(
            link.llm,
            links.scope(link.run if link.run is not None and not link.run.implicit else None),
            response,
        )
        ex.finish(link.role.describe_output(response) if link.role else response, usage=usage_of(response))

    def _abandoned(self, span_id: str) -> None:
        link = self._llms.pop(span_id, None)
        if link is None or link.ex is None or link.ex.ended:
            return
        try:
            output = (
                link.role.describe_output(link.last)
                if link.role is not None and link.last is not None
                else None
            )
            link.ex.finish(output, usage=usage_of(link.last), cut_short=True)
        except Exception as exc:
            self._fail_open("stream end", exc)

    def handle(self, event: Any, **kwargs: Any) -> None:
        try:
            self._on_event(event)
        except Exception as exc:
            self._fail_open("event", exc)

    def _on_event(self, event: Any) -> None:
        kind = type(event)
        if kind is LLMChatInProgressEvent or kind is LLMCompletionInProgressEvent:
            link = self._llms.get(event.span_id) if event.span_id else None
            delta = getattr(event.response, "delta", None)
            if link is not None and link.ex is not None:
                link.last = event.response
                if isinstance(delta, str) and delta:
                    link.ex.token(delta)
        elif kind is LLMChatEndEvent or kind is LLMCompletionEndEvent:
            link = self._llms.pop(event.span_id, None) if event.span_id else None
            if link is not None:
                self._finish_llm(link, event.response)
        elif kind is ExceptionEvent:
            if isinstance(event.exception, (GeneratorExit, asyncio.CancelledError)):
                # The app closed the stream early (llm_chat_callback's wrapped_gen reports the
                # GeneratorExit as an exception): the call did not fail, it was cut short.
                self._abandoned(event.span_id or "")
                return
            link = self._llms.pop(event.span_id, None) if event.span_id else None
            if link is not None and link.ex is not None and not link.ex.ended:
                link.ex.fail(event.exception)
