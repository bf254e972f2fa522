"""Gated generate and stream methods for one chat model instance.

`_generate_with_cache` / `_agenerate_with_cache` are the one funnel of invoke, generate and batch
(langchain_core/language_models/chat_models.py, BaseChatModel.generate / agenerate), below the
cache lookup's caller and above every way a reply is produced: a cache hit, the v2 event stream,
the v1 streaming branch (`self._stream(messages, stop=stop, **kwargs)`, without run_manager) and
`_generate`. They always receive `run_manager`, whose `run_id` links the call to the handler's node.
`_stream` / `_astream` are gated for `stream()` / `astream()` only; called from inside a gated
generate they pass through and, when no handler streams tokens, tee them into the node.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from langchain_core.outputs import ChatGenerationChunk

from graphmind.adapter import Engine, NodeExecution

from . import _registry as registry
from ._describe import (
    chat_result_json,
    chat_result_usage,
    describe_chunks,
    to_chat_result,
    to_chunk,
    tool_roster,
)
from ._edit import edited_messages
from ._nodes import llm_spec, llm_step, model_name
from ._tokens import emit


def _start(client: Engine, model: Any, messages: list[Any], kwargs: dict[str, Any]) -> NodeExecution:
    """A model node without the handler: identity from core's step tracker in the current run."""
    step = llm_step(client, None, messages)
    ex = client.start_node(llm_spec(step, messages, model_name(model), gated=True))
    if step.first_step:
        roster = tool_roster(kwargs.get("tools"))
        if roster:
            client.hint(roster, ex.parent_instance_id)
    return ex


def _tee(state: registry.Inside | None) -> Callable[[ChatGenerationChunk], None]:
    if state is None or not state.tee or state.ex is None:
        return lambda chunk: None
    ex, ids = state.ex, state.tool_ids
    return lambda chunk: emit(ex, chunk.message.content, chunk.message, ids)


def gated_generate(
    engine_of: Callable[[], Engine], model: Any, orig: Callable[..., Any], token: str
) -> Callable[..., Any]:
    @functools.wraps(orig)
    def _generate_with_cache(
        messages: list[Any], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        client = engine_of()  # per call: graphmind.configure() may replace the default client
        if not client.live or registry.is_inside(token):
            return orig(messages, stop=stop, run_manager=run_manager, **kwargs)
        offer = registry.claim(getattr(run_manager, "run_id", None), token)
        ex = offer.ex if offer is not None else _start(client, model, messages, kwargs)
        state = registry.Inside(token, ex, tee=offer is None)

        def calling(messages: list[Any]) -> Callable[[], Any]:
            def call() -> Any:
                mark = registry.inside.set(state)
                try:
                    return orig(messages, stop=stop, run_manager=run_manager, **kwargs)
                finally:
                    registry.inside.reset(mark)

            return call

        ex.spec.edit = lambda value: calling(edited_messages(value, messages))
        return ex.run_sync(calling(messages), chat_result_json, to_chat_result, chat_result_usage)

    return _generate_with_cache


def gated_agenerate(
    engine_of: Callable[[], Engine], model: Any, orig: Callable[..., Any], token: str
) -> Callable[..., Any]:
    @functools.wraps(orig)
    async def _agenerate_with_cache(
        messages: list[Any], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        client = engine_of()  # per call: graphmind.configure() may replace the default client
        if not client.live or registry.is_inside(token):
            return await orig(messages, stop=stop, run_manager=run_manager, **kwargs)
        offer = registry.claim(getattr(run_manager, "run_id", None), token)
        if offer is None:
            await client.await_attach()
        ex = offer.ex if offer is not None else _start(client, model, messages, kwargs)
        state = registry.Inside(token, ex, tee=offer is None)

        def calling(messages: list[Any]) -> Callable[[], Awaitable[Any]]:
            async def call() -> Any:
                mark = registry.inside.set(state)
                try:
                    return await orig(messages, stop=stop, run_manager=run_manager, **kwargs)
                finally:
                    registry.inside.reset(mark)

            return call

        ex.spec.edit = lambda value: calling(edited_messages(value, messages))
        return await ex.run_async(calling(messages), chat_result_json, to_chat_result, chat_result_usage)

    return _agenerate_with_cache


def gated_stream(
    engine_of: Callable[[], Engine], model: Any, orig: Callable[..., Any], token: str
) -> Callable[..., Any]:
    @functools.wraps(orig)
    def _stream(
        messages: list[Any], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        nested = registry.is_inside(token)
        client = engine_of()  # per call: graphmind.configure() may replace the default client
        if not client.live or nested is not None:
            tee = _tee(nested)
            for chunk in orig(messages, stop=stop, run_manager=run_manager, **kwargs):
                tee(chunk)
                yield chunk
            return
        offer = registry.claim(getattr(run_manager, "run_id", None), token) or registry.claim_last_model(
            token
        )
        ex = offer.ex if offer is not None else _start(client, model, messages, kwargs)
        tee = _tee(registry.Inside(token, ex, tee=offer is None))
        state = registry.Inside(token)  # nested calls (an inherited _astream's _stream) pass through, untee'd

        def step(it: Iterator[ChatGenerationChunk]) -> ChatGenerationChunk:
            mark = registry.inside.set(state)
            try:
                return next(it)
            finally:
                registry.inside.reset(mark)

        def open_stream() -> Iterator[ChatGenerationChunk]:
            mark = registry.inside.set(state)
            try:
                return iter(orig(messages, stop=stop, run_manager=run_manager, **kwargs))
            finally:
                registry.inside.reset(mark)

        yield from ex.stream_sync(
            open_stream, advance=step, on_item=tee, describe=describe_chunks, from_injected=to_chunk
        )

    return _stream


def gated_astream(
    engine_of: Callable[[], Engine], model: Any, orig: Callable[..., Any], token: str
) -> Callable[..., Any]:
    @functools.wraps(orig)
    async def _astream(
        messages: list[Any], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        nested = registry.is_inside(token)
        client = engine_of()  # per call: graphmind.configure() may replace the default client
        if not client.live or nested is not None:
            tee = _tee(nested)
            async for chunk in orig(messages, stop=stop, run_manager=run_manager, **kwargs):
                tee(chunk)
                yield chunk
            return
        offer = registry.claim(getattr(run_manager, "run_id", None), token) or registry.claim_last_model(
            token
        )
        if offer is None:
            await client.await_attach()
        ex = offer.ex if offer is not None else _start(client, model, messages, kwargs)
        tee = _tee(registry.Inside(token, ex, tee=offer is None))
        state = registry.Inside(token)

        async def step(it: AsyncIterator[ChatGenerationChunk]) -> ChatGenerationChunk:
            mark = registry.inside.set(state)
            try:
                return await it.__anext__()
            finally:
                registry.inside.reset(mark)

        def open_stream() -> AsyncIterator[ChatGenerationChunk]:
            stream: AsyncIterator[ChatGenerationChunk] = orig(
                messages, stop=stop, run_manager=run_manager, **kwargs
            )
            return stream.__aiter__()

        # aclosing: when this generator is closed early (the app's aclose, or the loop finalizing
        # it), the node's stream is closed at once too and finishes cutShort.
        async with contextlib.aclosing(
            ex.stream_async(
                open_stream, advance=step, on_item=tee, describe=describe_chunks, from_injected=to_chunk
            )
        ) as chunks:
            async for chunk in chunks:
                yield chunk

    return _astream
