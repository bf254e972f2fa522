"""Gated `chat` / `achat` / `stream_chat` / `astream_chat` for one LlamaIndex LLM instance.

Every agent and `*_with_tools` helper reaches the model through these four methods
(llama_index/core/llms/function_calling.py, FunctionCallingLLM.achat_with_tools: `await
self.achat(**chat_kwargs)`, astream_chat_with_tools: `await self.astream_chat(**chat_kwargs)`;
llama_index/core/agent/workflow/function_agent.py, FunctionAgent._get_response /
_get_streaming_response). The class's methods are wrapped by `llm_chat_callback`
(llama_index/core/llms/callbacks.py) and the dispatcher's span; the instance attribute calls them
as the body, after the before gate, so a provider's request timeout starts only once the gate let
the call through.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatResponse, ToolCallBlock

from graphmind.adapter import Engine, NodeExecution

from . import _links as links
from ._describe import chat_response_json, chunks_output, tool_calls_of, tool_roster, usage_of
from ._edit import edited_messages
from ._inject import reply_converter, stream_converter
from ._nodes import llm_node
from ._team import scoped


def remember_reply(llm: Any, key: str, response: Any) -> None:
    """The tool calls a reply asks for, read the way the agent will read them."""
    if not isinstance(response, ChatResponse):
        return
    message = response.message
    if "tool_calls" not in message.additional_kwargs and not any(
        isinstance(b, ToolCallBlock) for b in message.blocks
    ):
        return  # no tool call in either place an LLM class keeps them: nothing for a tool node to claim
    calls: list[Any] = []
    reader = getattr(llm, "get_tool_calls_from_response", None)
    try:
        calls = list(reader(response, error_on_no_tool_call=False) or []) if callable(reader) else []
    except Exception:
        calls = []
    links.remember_tool_calls(key, calls or tool_calls_of(response.message))


def _start(
    engine: Engine, llm: Any, messages: Sequence[Any], kwargs: Mapping[str, Any]
) -> tuple[NodeExecution, str]:
    run, parent = links.current_context()
    if run is None:
        run = engine.current_run()
    with scoped(links.current_agents()):
        spec, step = llm_node(engine, run, llm, messages, kwargs, gated=True)
        spec.hold_timeout = links.current_timeout()  # the workflow's timeout runs during a hold
        ex = engine.start_node(spec, run=run, parent_instance_id=parent)
    if step.first_step:
        roster = tool_roster(kwargs.get("tools"))
        if roster:
            engine.hint(roster, ex.parent_instance_id, run=ex.run)
    return ex, links.scope(run)


def _tee(ex: NodeExecution) -> Callable[[Any], None]:
    def on_item(chunk: Any) -> None:
        delta = getattr(chunk, "delta", None)
        if isinstance(delta, str) and delta:
            ex.token(delta)

    return on_item


def gated_chat(engine_of: Callable[[], Engine], llm: Any, orig: Callable[..., Any]) -> Callable[..., Any]:
    convert = reply_converter(llm)

    @functools.wraps(orig)
    def chat(messages: Sequence[Any], **kwargs: Any) -> Any:
        engine = engine_of()  # per call: graphmind.configure() may replace the default client
        if not engine.live or links.is_inside(llm):
            return orig(messages, **kwargs)
        ex, key = _start(engine, llm, messages, kwargs)
        mark = links.Inside(llm, ex)

        def calling(messages: Sequence[Any]) -> Callable[[], Any]:
            def body() -> Any:
                token = links.inside.set(mark)
                try:
                    return orig(messages, **kwargs)
                finally:
                    links.inside.reset(token)

            return body

        ex.spec.edit = lambda value: calling(edited_messages(value, messages, ex.spec.input))
        response = ex.run_sync(calling(messages), chat_response_json, convert, usage_of)
        remember_reply(llm, key, response)
        return response

    return chat


def gated_achat(engine_of: Callable[[], Engine], llm: Any, orig: Callable[..., Any]) -> Callable[..., Any]:
    convert = reply_converter(llm)

    @functools.wraps(orig)
    async def achat(messages: Sequence[Any], **kwargs: Any) -> Any:
        engine = engine_of()  # per call: graphmind.configure() may replace the default client
        if not engine.live or links.is_inside(llm):
            return await orig(messages, **kwargs)
        await engine.await_attach()
        ex, key = _start(engine, llm, messages, kwargs)
        mark = links.Inside(llm, ex)

        def calling(messages: Sequence[Any]) -> Callable[[], Awaitable[Any]]:
            async def body() -> Any:
                token = links.inside.set(mark)
                try:
                    return await orig(messages, **kwargs)
                finally:
                    links.inside.reset(token)

            return body

        ex.spec.edit = lambda value: calling(edited_messages(value, messages, ex.spec.input))
        response = await ex.run_async(calling(messages), chat_response_json, convert, usage_of)
        remember_reply(llm, key, response)
        return response

    return achat


def gated_stream_chat(
    engine_of: Callable[[], Engine], llm: Any, orig: Callable[..., Any]
) -> Callable[..., Any]:
    convert = stream_converter(llm)

    @functools.wraps(orig)
    def stream_chat(messages: Sequence[Any], **kwargs: Any) -> Any:
        engine = engine_of()  # per call: graphmind.configure() may replace the default client
        if not engine.live or links.is_inside(llm):
            return orig(messages, **kwargs)
        ex, key = _start(engine, llm, messages, kwargs)
        mark = links.Inside(llm, ex)

        def advance(it: Iterator[Any]) -> Any:
            token = links.inside.set(mark)
            try:
                return next(it)
            finally:
                links.inside.reset(token)

        def open_stream() -> Iterator[Any]:
            token = links.inside.set(mark)
            try:
                return iter(orig(messages, **kwargs))
            finally:
                links.inside.reset(token)

        def replies() -> Iterator[Any]:
            last = None
            for last in ex.stream_sync(
                open_stream, advance=advance, on_item=_tee(ex), describe=chunks_output, from_injected=convert
            ):
                yield last
            remember_reply(llm, key, last)

        return replies()

    return stream_chat


def gated_astream_chat(
    engine_of: Callable[[], Engine], llm: Any, orig: Callable[..., Any]
) -> Callable[..., Any]:
    convert = stream_converter(llm)

    @functools.wraps(orig)
    async def astream_chat(messages: Sequence[Any], **kwargs: Any) -> Any:
        engine = engine_of()  # per call: graphmind.configure() may replace the default client
        if not engine.live or links.is_inside(llm):
            return await orig(messages, **kwargs)
        await engine.await_attach()
        ex, key = _start(engine, llm, messages, kwargs)
        mark = links.Inside(llm, ex)

        async def opened() -> AsyncIterator[Any]:
            # `astream_chat` is a coroutine that returns the generator: awaiting it is the call.
            async for chunk in await orig(messages, **kwargs):
                yield chunk

        async def advance(it: AsyncIterator[Any]) -> Any:
            token = links.inside.set(mark)
            try:
                return await it.__anext__()
            finally:
                links.inside.reset(token)

        async def replies() -> AsyncIterator[Any]:
            last = None
            async for last in ex.stream_async(
                opened, advance=advance, on_item=_tee(ex), describe=chunks_output, from_injected=convert
            ):
                yield last
            remember_reply(llm, key, last)

        return replies()

    return astream_chat
