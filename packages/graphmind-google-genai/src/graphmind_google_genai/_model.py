"""The model side: every request the SDK sends for `generate_content` is one `llm:step` node.

The hook is the per-request method (`_generate_content` / `_generate_content_stream`, sync and
async): `generate_content` calls it once per request, an automatic-function-calling loop once per
round, automatic continuation once per hop, and chats go through `generate_content`. So each model
request is one node, with the SDK's own `GenerateContentResponse` in and out: an injected value
becomes one through `_inject` (the app, and AFC, cannot tell it from the wire's), a stream hands
the app every chunk as the SDK yields it and replays an injected reply chunk by chunk.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from google.genai import types

from graphmind.adapter import Engine, NodeExecution, NodeSpec, Patches

from . import _describe, _edit, _inject

Call = Callable[[str, Any, Any], Any]  # (model, contents, config) -> the SDK's request


def spec(engine: Engine, model: str, contents: Any, config: Any, call: Call) -> NodeSpec | None:
    """The step's node (None: describing failed, the call runs unrecorded). An edited input is the
    same request with other arguments (`_edit.request`): `call` runs it."""

    def edit(value: Any) -> Callable[[], Any]:
        m, c, cfg = _edit.request(value, model, config)
        return lambda: call(m, c, cfg)

    def build() -> NodeSpec:
        node_input, key, length = _describe.request(model, contents, config)
        step = engine.next_llm_step(key, length)
        return NodeSpec(
            "step",
            "llm",
            node_input,
            node_id="llm:step",
            instance_id=step.instance_id,
            attrs={"model": str(model), "system": "gemini"},
            tool_calls_in_output=True,
            edit=edit,
        )

    return engine.spec_or_none("llm", "step", build)


def _tokens(ex: NodeExecution) -> Callable[[types.GenerateContentResponse], None]:
    def on_item(chunk: types.GenerateContentResponse) -> None:
        text = _describe.chunk_text(chunk)
        if text:
            ex.token(text)

    return on_item


def wrap_generate(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """`Models._generate_content`: one request, one gated node."""

    def call(model: str, contents: Any, config: Any) -> Any:
        return original(model=model, contents=contents, config=config)

    def _generate_content(*, model: str, contents: Any, config: Any = None) -> Any:
        engine = state.engine()
        node = spec(engine, model, contents, config, call) if engine.live else None
        if node is None:
            return original(model=model, contents=contents, config=config)
        return engine.execute(
            node,
            lambda: original(model=model, contents=contents, config=config),
            describe_output=_describe.reply,
            describe_usage=_describe.reply_usage,
            from_injected=_inject.response,
        )

    return _generate_content


def wrap_agenerate(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """`AsyncModels._generate_content`: the same, awaited."""

    def call(model: str, contents: Any, config: Any) -> Any:
        return original(model=model, contents=contents, config=config)

    async def _generate_content(*, model: str, contents: Any, config: Any = None) -> Any:
        engine = state.engine()
        node = spec(engine, model, contents, config, call) if engine.live else None
        if node is None:
            return await original(model=model, contents=contents, config=config)
        return await engine.aexecute(
            node,
            lambda: original(model=model, contents=contents, config=config),
            describe_output=_describe.reply,
            describe_usage=_describe.reply_usage,
            from_injected=_inject.response,
        )

    return _generate_content


def wrap_stream(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """`Models._generate_content_stream` (a generator): the node's stream loop hands the app each
    chunk as the SDK yields it (tokens live), or an injected reply chunk by chunk."""

    def _generate_content_stream(
        *, model: str, contents: Any, config: Any = None
    ) -> Iterator[types.GenerateContentResponse]:
        engine = state.engine()
        node = spec(engine, model, contents, config, original_call) if engine.live else None
        if node is None:
            yield from original(model=model, contents=contents, config=config)
            return
        ex = engine.start_node(node)
        yield from ex.stream_sync(
            # iter(): the SDK only iterates what this returns (`for chunk in ...`), so any iterable
            # passes there (a test's mock returns a list); the node's loop takes items with next()
            lambda: iter(original(model=model, contents=contents, config=config)),
            on_item=_tokens(ex),
            describe=_describe.chunks,
            from_injected=_inject.chunks,
        )

    def original_call(model: str, contents: Any, config: Any) -> Any:
        return iter(original(model=model, contents=contents, config=config))

    return _generate_content_stream


def wrap_astream(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """`AsyncModels._generate_content_stream` (a coroutine that returns an async iterator)."""

    def opener(model: str, contents: Any, config: Any) -> AsyncIterator[types.GenerateContentResponse]:
        async def opened() -> AsyncIterator[types.GenerateContentResponse]:
            stream = await original(model=model, contents=contents, config=config)
            async for chunk in relay(stream):
                yield chunk

        return opened()

    async def _generate_content_stream(
        *, model: str, contents: Any, config: Any = None
    ) -> AsyncIterator[types.GenerateContentResponse]:
        engine = state.engine()
        node = spec(engine, model, contents, config, opener) if engine.live else None
        if node is None:
            return await original(model=model, contents=contents, config=config)  # type: ignore[no-any-return]

        async def steps() -> AsyncIterator[types.GenerateContentResponse]:
            ex = await engine.astart_node(node)
            stream = ex.stream_async(
                lambda: opener(model, contents, config),
                on_item=_tokens(ex),
                describe=_describe.chunks,
                from_injected=_inject.chunks,
            )
            async for chunk in relay(stream):
                yield chunk

        return steps()

    return _generate_content_stream


async def relay(stream: Any) -> AsyncIterator[Any]:
    """`stream`'s items; closing this closes `stream` at once (an `async for` alone leaves it to the
    garbage collector, and the node would end late)."""
    try:
        async for item in stream:
            yield item
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
