"""GraphmindCallbackHandler: every LangChain run as a GraphMind node, with before gates that hold.

Hook points (langchain-core >=0.3, <2; read in 1.8.3):

| callback                                  | node                        | gate                    |
|-------------------------------------------|-----------------------------|-------------------------|
| on_chain_start / _end / _error            | root chain: the run; others | none (structure only)   |
|                                           | pass their parent through;  |                         |
|                                           | LangGraph agents (_team.py) |                         |
| on_chat_model_start, on_llm_start         | `llm:step`                  | before (dual sync/async)|
| on_llm_new_token                          | node.token                  |                         |
| on_llm_end / _error                       | finished (usage) / error    |                         |
| on_tool_start / _end / _error             | `tool:<name>`               | before (dual sync/async)|
| on_retriever_start / _end / _error        | `retriever:<name>`          | before (dual sync/async)|

No callback can substitute a result (langchain_core/callbacks/manager.py, handle_event ignores
return values), so an ungated call's before gate offers continue and abort only; a call gated by
`gate_tools` / `gate_model` leaves its gates to the gated method, which can inject and retry.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import ChatGenerationChunk

import graphmind
from graphmind.adapter import Engine, NodeExecution, RunAborted, RunContext, engine_for, thread_id

from . import _registry as registry
from ._describe import (
    claim_reply,
    claim_usage,
    documents_json,
    field_or_none,
    llm_result_json,
    llm_result_usage,
    tool_output_json,
    tool_roster,
)
from ._dual import dual
from ._inline import InlineExceptTextLlmStart
from ._links import Link, name_of, root_line, run_name
from ._nodes import llm_spec, llm_step, model_name, retriever_spec, tool_spec
from ._team import Routes, agent_path, graph_node, scoped
from ._tokens import emit


class GraphmindCallbackHandler(BaseCallbackHandler):
    """Pass it in `config={"callbacks": [GraphmindCallbackHandler()]}`.

    `session`: a `graphmind.Client` (default: `graphmind.get_client()`, looked up per call).
    """

    # handle_event re-raises a handler's exception only with raise_error: that is how an abort at
    # a before gate stops the call. Every other failure inside the handler is caught here.
    raise_error = True
    # Sync methods then run on the event loop itself on async paths instead of in the default
    # executor (manager.py, _ahandle_event_for_handler); the ones that may hold are `dual`. False
    # only for the async text-LLM start's dispatch, which would otherwise hide the run from every
    # other handler (_inline.py).
    run_inline = InlineExceptTextLlmStart()
    # handle_event / ahandle_event read one of these per callback and handler (manager.py,
    # `getattr(handler, ignore_condition_name)`); BaseCallbackHandler's are properties (a Python
    # call each), these plain attributes give the same False.
    ignore_llm = ignore_retry = ignore_chain = ignore_agent = False
    ignore_retriever = ignore_chat_model = ignore_custom_event = False

    def __init__(self, session: graphmind.Client | None = None) -> None:
        self._session = session
        # A given session's engine never changes; without one, the default client is looked up per call.
        self._engine: Engine | None = engine_for(session) if session is not None else None
        self._links: dict[UUID, Link] = {}
        self._routes = Routes()  # LangGraph Commands waiting for their target agent (_team.py)

    def _client(self) -> Engine:
        return self._engine or engine_for(None)

    def _context(self, kwargs: dict[str, Any]) -> tuple[RunContext | None, str | None, tuple[str, ...]]:
        """(run, parent node, agent path) of a call: its parent run's, and the agents a LangGraph
        graph's metadata names (_team.py)."""
        parent_run_id = kwargs.get("parent_run_id")
        link = self._links.get(parent_run_id) if parent_run_id is not None else None
        if link is None:
            return None, None, ()
        parent = link.ex.instance_id if link.ex is not None else link.parent
        return link.run, parent, agent_path(link.graph, kwargs.get("metadata"))

    @staticmethod
    def _fail_open(client: Engine, where: str, exc: Exception) -> None:
        client.warn(
            f"[graphmind] the LangChain handler failed in {where} ({type(exc).__name__}: {exc}); "
            "the call goes on unobserved (GRAPHMIND_DISABLED=1 turns GraphMind off)",
            key=f"lc-{where}",
        )

    # ---- chains: the parent structure; a root chain is a run ----------------------------------
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        client = self._client()
        if not client.live:
            return
        try:
            link = self._links.get(parent_run_id) if parent_run_id is not None else None
            if link is not None:
                if link.run is not None and link.run.aborted:
                    raise RunAborted(link.run.run_id)
                child = self._links[run_id] = Link(
                    link.run, link.ex.instance_id if link.ex is not None else link.parent, graph=link.graph
                )
                if metadata and link.graph is not None and "langgraph_checkpoint_ns" in metadata:
                    graph_node(client, self._routes, child, metadata, inputs)
                return
            run = client.current_run()
            name = run_name(serialized, kwargs)
            if run is not None:  # inside `with graphmind.run(...)`: the run is the user's
                if run.aborted:
                    raise RunAborted(run.run_id)
                self._links[run_id] = Link(run, None, graph=name, root=True)
                return
            # LangGraph copies `config["configurable"]["thread_id"]` into the callbacks' metadata
            # (langgraph/_internal/_config.py:429 `_PROPAGATE_TO_METADATA`): the run's thread.
            thread = thread_id(metadata.get("thread_id")) if metadata else None
            self._links[run_id] = Link(
                client.begin_run(name, thread=thread), None, owns_run=True, graph=name, root=True
            )
        except RunAborted:
            raise
        except Exception as exc:
            self._fail_open(client, "on_chain_start", exc)

    def _end_chain(self, run_id: UUID, error: BaseException | None, outputs: Any = None) -> None:
        link = self._links.pop(run_id, None)
        if link is not None:
            self._routes.chain_ended(link, outputs)
        if link is not None and link.owns_run and link.run is not None:
            client = self._client()
            try:
                client.end_run(link.run, error)
            except Exception as exc:
                self._fail_open(client, "on_chain_end", exc)

    def on_chain_end(
        self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._end_chain(run_id, None, outputs)

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._end_chain(run_id, error)

    # ---- opening nodes (shared by the sync and async variants) ----------------------------------
    def _open_model(
        self,
        client: Engine,
        serialized: Any,
        messages: list[Any],
        run_id: UUID,
        kwargs: dict[str, Any],
        prompts: bool,
    ) -> NodeExecution | None:
        run, parent, agents = self._context(kwargs)
        metadata = kwargs.get("metadata")
        token = metadata.get(registry.MARK) if metadata else None
        params = kwargs.get("invocation_params") or {}
        name = model_name(None, params, metadata) or name_of(serialized, kwargs, "model")
        with scoped(agents):
            step = llm_step(client, run, messages)
            ex = client.start_node(
                llm_spec(step, messages, name, token is not None, prompts),
                run=run,
                parent_instance_id=parent,
                line=root_line(run, run_id),
            )
        if step.first_step:
            roster = tool_roster(params.get("tools"))
            if roster:
                client.hint(roster, ex.parent_instance_id, run=ex.run)
        self._links[run_id] = Link(ex.run, None, ex)
        if token is not None:
            registry.last_model_offer.set(registry.offer(run_id, ex, token))
            return None
        return ex

    def _open_tool(
        self,
        client: Engine,
        serialized: Any,
        input_str: str,
        run_id: UUID,
        kwargs: dict[str, Any],
    ) -> NodeExecution | None:
        run, parent, agents = self._context(kwargs)
        metadata = kwargs.get("metadata")
        inputs = kwargs.get("inputs")
        token = metadata.get(registry.MARK) if metadata else None
        name = name_of(serialized, kwargs, "tool")
        instance = kwargs.get("tool_call_id") or run_id.hex
        described = inputs if inputs is not None else input_str
        with scoped(agents):
            ex = client.start_node(
                tool_spec(name, described, instance, token is not None),
                run=run,
                parent_instance_id=parent,
                line=root_line(run, run_id),
            )
        self._links[run_id] = Link(ex.run, None, ex)
        if token is not None:
            registry.offer(run_id, ex, token)
            return None
        return ex

    def _open_retriever(
        self, client: Engine, serialized: Any, query: str, run_id: UUID, kwargs: dict[str, Any]
    ) -> NodeExecution:
        run, parent, agents = self._context(kwargs)
        spec = retriever_spec(name_of(serialized, kwargs, "retriever"), query, run_id.hex)
        with scoped(agents):
            ex = client.start_node(spec, run=run, parent_instance_id=parent, line=root_line(run, run_id))
        self._links[run_id] = Link(ex.run, None, ex)
        return ex

    def _hold(self, client: Engine, ex: NodeExecution) -> None:
        try:
            ex.before()
        except RunAborted:
            raise
        except Exception as exc:
            self._fail_open(client, "before gate", exc)

    async def _ahold(self, client: Engine, ex: NodeExecution) -> None:
        try:
            await ex.abefore()
        except RunAborted:
            raise
        except Exception as exc:
            self._fail_open(client, "before gate", exc)

    # ---- starts: open the node, then pass its before gate (held on the sync path, awaited on async)
    # The gate is passed only when it `may_hold` (attached, or the run aborted): on the detached
    # fast path `before()` would return at once anyway, and on the async path that saves the gate's
    # two coroutines per call.
    def _start(self, where: str, opener: Any, *args: Any) -> None:
        client = self._client()
        if not client.live:
            return
        try:
            ex: NodeExecution | None = opener(client, *args)
        except RunAborted:
            raise
        except Exception as exc:
            self._fail_open(client, where, exc)
            return
        if ex is not None and ex.may_hold():
            self._hold(client, ex)

    async def _astart(self, where: str, opener: Any, *args: Any) -> None:
        client = self._client()
        if not client.live:
            return
        await client.await_attach()
        try:
            ex: NodeExecution | None = opener(client, *args)
        except RunAborted:
            raise
        except Exception as exc:
            self._fail_open(client, where, exc)
            return
        if ex is not None and ex.may_hold():
            await self._ahold(client, ex)

    # Each start below is one sync and one async variant of a single line (see _dual.py for why
    # both exist). LangChain passes run_id, parent_run_id, metadata (and inputs for tools) by name.
    def _chat_model_start(
        self, serialized: Any, messages: list[list[Any]], *, run_id: UUID, **kw: Any
    ) -> None:
        self._start(
            "on_chat_model_start",
            self._open_model,
            serialized,
            messages[0] if messages else [],
            run_id,
            kw,
            False,
        )

    async def _achat_model_start(
        self, serialized: Any, messages: list[list[Any]], *, run_id: UUID, **kw: Any
    ) -> None:
        await self._astart(
            "on_chat_model_start",
            self._open_model,
            serialized,
            messages[0] if messages else [],
            run_id,
            kw,
            False,
        )

    on_chat_model_start = dual(_chat_model_start, _achat_model_start)

    def _llm_start(self, serialized: Any, prompts: list[str], *, run_id: UUID, **kw: Any) -> None:
        self._start("on_llm_start", self._open_model, serialized, prompts, run_id, kw, True)

    async def _allm_start(self, serialized: Any, prompts: list[str], *, run_id: UUID, **kw: Any) -> None:
        await self._astart("on_llm_start", self._open_model, serialized, prompts, run_id, kw, True)

    on_llm_start = dual(_llm_start, _allm_start)

    def _tool_start(self, serialized: Any, input_str: str, *, run_id: UUID, **kw: Any) -> None:
        self._start("on_tool_start", self._open_tool, serialized, input_str, run_id, kw)

    async def _atool_start(self, serialized: Any, input_str: str, *, run_id: UUID, **kw: Any) -> None:
        await self._astart("on_tool_start", self._open_tool, serialized, input_str, run_id, kw)

    on_tool_start = dual(_tool_start, _atool_start)

    def _retriever_start(self, serialized: Any, query: str, *, run_id: UUID, **kw: Any) -> None:
        self._start("on_retriever_start", self._open_retriever, serialized, query, run_id, kw)

    async def _aretriever_start(self, serialized: Any, query: str, *, run_id: UUID, **kw: Any) -> None:
        await self._astart("on_retriever_start", self._open_retriever, serialized, query, run_id, kw)

    on_retriever_start = dual(_retriever_start, _aretriever_start)

    # ---- observing: tokens and endings (sync; inline on async paths, never hold) ----------------
    def on_llm_new_token(
        self, token: Any, *, chunk: Any = None, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        link = self._links.get(run_id)
        if link is None or link.ex is None:
            return
        ids = link.tool_ids
        if ids is None:  # made on the first token: most nodes stream nothing
            ids = link.tool_ids = {}
        try:
            # a chat chunk has its message as a field (plain getattr); a text LLM's GenerationChunk
            # has none, which pydantic would answer with an exception per token (field_or_none)
            message = (
                getattr(chunk, "message", None)
                if type(chunk) is ChatGenerationChunk
                else field_or_none(chunk, "message")
            )
            emit(link.ex, token, message, ids)
        except Exception as exc:
            self._fail_open(self._client(), "on_llm_new_token", exc)

    def _end(
        self,
        run_id: UUID,
        where: str,
        output: Any = None,
        usage: Any = None,
        error: BaseException | None = None,
        describe: Any = None,
    ) -> None:
        link = self._links.pop(run_id, None)
        registry.withdraw(run_id)
        ex = link.ex if link is not None else None
        if ex is None or ex.ended:
            return
        try:
            if error is not None:
                ex.fail(error)
            elif describe is llm_result_json:  # a model's reply: built here, handed over owned when plain
                reply, used = llm_result_json(output), llm_result_usage(output)
                ex.finish(reply, usage=used, owned=claim_reply(reply) and claim_usage(used))
            else:
                ex.finish(describe(output) if describe else output, usage=usage(output) if usage else None)
        except Exception as exc:
            self._fail_open(self._client(), where, exc)

    def on_llm_end(
        self, response: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._end(run_id, "on_llm_end", response, llm_result_usage, describe=llm_result_json)

    def on_llm_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._end(run_id, "on_llm_error", error=error)

    def on_tool_end(
        self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._end(run_id, "on_tool_end", output, describe=tool_output_json)

    def on_tool_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._end(run_id, "on_tool_error", error=error)

    def on_retriever_end(
        self, documents: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._end(run_id, "on_retriever_end", documents, describe=documents_json)

    def on_retriever_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self._end(run_id, "on_retriever_error", error=error)

    def __repr__(self) -> str:
        return f"<GraphmindCallbackHandler session={self._session!r}>"
