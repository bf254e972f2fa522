"""Each model call of an agent: one gated `llm:step` node.

The run loop asks `get_model(agent, run_config)` for the turn's model
(agents/run_internal/run_loop.py:2958 in `get_new_response`, :2514 in `run_single_turn_streamed`),
then calls `model.get_response(...)` (:3026) or iterates `model.stream_response(...)` (:2622). The
`get_model` row wraps that lookup: the model it returns (any `Model`: the OpenAI ones, LiteLLM's, a
test's fake) gets its two methods gated in its own namespace (one `Patches` per model, kept on it
under `MODEL_MARK`; the class and other instances are untouched, `isinstance` and identity hold),
and the agent's name is noted for the node. Patching the instance and not the class keeps the rows
to the two methods of the abstract interface (agents/models/interface.py:68, :103).
"""

from __future__ import annotations

import contextvars
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

from graphmind.adapter import Hook, NodeSpec, Owned, Patches, Settled, enter_agent, owned_model_call

from . import _describe, _edit, _inject

OWNER = "graphmind-openai-agents"
MODEL_MARK = "_graphmind_openai_agents"

# The agent whose turn asked for the model (set by the `get_model` wrapper in the run loop's task,
# read by the model call it makes next in the same task).
_AGENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("graphmind_agents_agent", default=None)


_PARAMS = ("system_instructions", "input", "model_settings", "tools", "output_schema", "handoffs", "tracing")


def _spec(
    engine: Any,
    model: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    streamed: bool,
    body: Callable[[dict[str, Any]], Callable[[], Any]],
) -> NodeSpec:
    bound = dict(zip(_PARAMS, args, strict=False)) if args else {}  # the interface's arguments by name
    bound.update(kwargs)  # (the run loop passes them by keyword; a caller may not)
    name = getattr(model, "model", None)
    described = _describe.describe_request(
        _AGENT.get(),
        name if type(name) is str or isinstance(name, str) else type(model).__name__,
        bound.get("system_instructions"),
        bound.get("input"),
        bound.get("tools"),
        bound.get("handoffs"),
        streamed,
    )
    node_input, key, length = described
    step = engine.next_llm_step(key, length)
    return NodeSpec(
        "step",
        "llm",
        node_input,
        node_id="llm:step",
        instance_id=step.instance_id,
        # attrs.model: where the hub reads a model step's model to price it (docs/protocol.md)
        attrs={"framework": "openai-agents", "model": node_input["model"]},  # as checked in the input
        tool_calls_in_output=True,
        owned=type(described) is Owned,  # every leaf checked while building (_describe.py)
        edit=_edit.model_edit(body, bound, node_input),
    )


async def _settle(response: Any) -> Settled:
    output, owned = _describe.reply_of(getattr(response, "output", None))
    usage = _describe.describe_usage(response)
    return Settled(response, output, usage, owned=owned and _describe.plain_usage(usage))


async def _owned(call: Any) -> Any:
    with owned_model_call(OWNER):  # graphmind-openai under it passes this request through
        return await call


def wrap_get_response(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    model = getattr(original, "__self__", None)

    def owned_body(call: dict[str, Any]) -> Callable[[], Any]:
        return lambda: _owned(original(**call))

    async def get_response(*args: Any, **kwargs: Any) -> Any:
        engine = state.engine()  # per call: graphmind.configure() may replace the default client
        if not engine.live:
            return await original(*args, **kwargs)
        spec = engine.spec_or_none("llm", "step", _spec, engine, model, args, kwargs, False, owned_body)
        if spec is None:
            return await original(*args, **kwargs)

        async def real() -> Any:
            with owned_model_call(OWNER):  # graphmind-openai under it passes this request through
                return await original(*args, **kwargs)

        return await engine.aexecute(spec, real, from_injected=_inject.model_response, settle=_settle)

    get_response.__wrapped__ = original  # type: ignore[attr-defined]
    return get_response


def wrap_stream_response(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    model = getattr(original, "__self__", None)

    def stream_response(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        engine = state.engine()
        if not engine.live:
            return original(*args, **kwargs)  # type: ignore[no-any-return]
        spec = engine.spec_or_none(
            "llm", "step", _spec, engine, model, args, kwargs, True, lambda kw: lambda: original(**kw)
        )
        if spec is None:
            return original(*args, **kwargs)  # type: ignore[no-any-return]
        return _gated_stream(engine, spec, lambda: original(*args, **kwargs))

    stream_response.__wrapped__ = original  # type: ignore[attr-defined]
    return stream_response


def _advancing(ex: Any) -> Callable[[Any], Any]:
    """The `advance` of one model stream: each item read as owned (the request is sent on the first
    item), and each text delta streamed as a `token` here, not in an `on_item` (one call less per
    item; the stream loop would call it at the same point, right after the item is read). One
    `owned_model_call` per stream, entered per item: a stream's items are read one at a time (an
    async generator is never re-entered), so its token is never shared."""
    owner = owned_model_call(OWNER)
    token = ex.token

    async def advance(stream: Any) -> Any:
        with owner:
            item = await stream.__anext__()
        if getattr(item, "type", None) == "response.output_text.delta":
            token(item.delta)
        return item

    return advance


async def _gated_stream(engine: Any, spec: NodeSpec, open_stream: Callable[[], Any]) -> AsyncIterator[Any]:
    ex = await engine.astart_node(spec)

    stream = ex.stream_async(
        open_stream,
        advance=_advancing(ex),
        describe=_inject.stream_reply,
        from_injected=_inject.completed_event,
    )
    try:
        async for event in stream:
            yield event
    finally:
        # The run loop closes the model stream in its own task (run_loop.py:2650, `aclosing`): close
        # ours, and so the model's, right here, not later from asyncio's async-generator finalizer.
        await stream.aclose()


class Models:
    """The models the process's `get_model` wrapper gated, so that undo reaches each of them."""

    def __init__(self, hooks: tuple[Hook[Patches], ...]) -> None:
        self._hooks = hooks  # the per-model rows (_hooks.MODEL_HOOKS)
        self._models: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()

    def gate(self, model: Any, state: Patches) -> None:
        if Patches.of(model, MODEL_MARK) is not None:
            return
        try:
            patches = Patches(state.session)
            patches.apply(model, self._hooks, state)
            patches.keep(model, MODEL_MARK)
            self._models[id(model)] = model
        except (TypeError, AttributeError) as exc:  # no instance namespace (__slots__), no such method
            state.engine().warn(
                f"[graphmind] the model {type(model).__name__} cannot be gated ({exc!r}); its calls run unrecorded",
                key="openai-agents-model",
            )

    def undo(self) -> None:
        from graphmind.adapter import uninstrument_once

        for model in list(self._models.values()):
            uninstrument_once(model, MODEL_MARK)
        self._models.clear()


def wrap_get_model(models: Models) -> Callable[[Callable[..., Any], Patches], Callable[..., Any]]:
    def wrap(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
        def get_model(agent: Any, run_config: Any) -> Any:
            model = original(agent, run_config)
            if state.engine().live:
                name = getattr(agent, "name", None)
                _AGENT.set(name)
                if isinstance(name, str) and name:
                    # The turn's agent from here on in the run loop's task: after a handoff, the
                    # target (core names its steps `llm:step@<agent>`; docs/protocol.md, "Agents").
                    enter_agent(name)
                models.gate(model, state)
            return model

        get_model.__wrapped__ = original  # type: ignore[attr-defined]
        return get_model

    return wrap
