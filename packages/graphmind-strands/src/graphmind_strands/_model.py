"""The model side: every model call of an agent is one `llm:step` node, a Wrap handler of Strands'
`InvokeModelStage` (strands/middleware/stages.py:113).

Why the middleware stage and not `BeforeModelCallEvent` / `AfterModelCallEvent`: a before hook
cannot skip the call (its `cancel` answers with a fixed text, strands/event_loop/event_loop.py:550),
and a hook's `retry` comes after the streamed events already reached the app. A Wrap handler gets
the call's context and `next_fn`: it may never call `next_fn` (an inject, a replay: zero provider
requests, answered with the events a model call yields), call it again (retry), or with other
messages (`context.replace`, an edit). Ours sits innermost (next to the terminal, `_stages.py`), so
the app's own middleware sees an injected reply as the model's.

The events stream through `NodeExecution.stream_async`: text deltas become `node.token`s; when an
after gate would hold, the events are held back until it is answered (retry then streams the next
attempt, and the app never sees the first one); otherwise they reach the app as they arrive.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from strands.types._events import TextStreamEvent
from strands.types.events import ModelStopReason

from graphmind.adapter import Engine, NodeSpec

from . import _describe, _edit, _inject, _runs


async def gate_model(
    engine: Engine, ctx: Any, next_fn: Callable[[Any], AsyncIterator[Any]]
) -> AsyncGenerator[Any, None]:
    """One model call of `ctx.agent` as a gated `llm:step` node; yields what the call yields."""
    model = _describe.model_name(ctx.model)

    def edit(value: Any) -> Callable[[], AsyncIterator[Any]]:
        # an edited input: the same call with the edited messages (unchanged ones keep their form);
        # converted now, so a value that cannot be holds the gate again
        edited = ctx.replace(messages=_edit.messages(value, ctx.messages))
        return lambda: next_fn(edited)

    def build() -> NodeSpec:
        node_input, key, length = _describe.request(ctx)
        step = engine.next_llm_step(key, length)
        return NodeSpec(
            "step",
            "llm",
            node_input,
            node_id="llm:step",
            instance_id=step.instance_id,
            attrs={
                "model": model,
                "framework": "strands",
                "agent": str(getattr(ctx.agent, "name", "") or "agent"),
            },
            tool_calls_in_output=True,
            edit=edit,
        )

    spec = engine.spec_or_none("llm", "step", build)
    if spec is None:
        async for event in next_fn(ctx):
            yield event
        return

    def on_item(event: Any) -> None:
        if isinstance(event, TextStreamEvent):
            ex.token(str(event["data"]))

    def describe(events: list[Any]) -> tuple[Any, Any]:
        stop = next((e for e in reversed(events) if isinstance(e, ModelStopReason)), None)
        if stop is None:  # cut short before the stop event: the text that arrived
            text = "".join(str(e["data"]) for e in events if isinstance(e, TextStreamEvent))
            return {"role": "assistant", "content": text or None, "model": model}, None
        return _describe.reply(stop, model), _describe.usage(stop)

    ex = await engine.astart_node(spec)
    try:
        async for event in ex.stream_async(
            lambda: next_fn(ctx), on_item=on_item, describe=describe, from_injected=_inject.model_events
        ):
            yield event
    except Exception as exc:
        _runs.note_error(exc)  # the run ends with it, unless Strands' own retry gets through next
        raise
    _runs.note_error(None)
