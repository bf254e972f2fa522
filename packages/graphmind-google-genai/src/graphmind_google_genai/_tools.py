"""Automatic function calling: each Python function the SDK calls for the model is a gated
`tool:<name>` node (inject skips its body, retry runs it again, edit changes its arguments).

The SDK calls a tool in one place per mode, by the module-level name
(`_extra_utils.invoke_function_from_dict_args` and its async twin, from
`get_function_response_parts[_async]` inside `generate_content`'s AFC loop), so that name is
patched once for the process (a shared row: removed with the last instrumented client). It gates
only the calls an instrumented client's `generate_content` makes: the public methods of each
instrumented `Models` set `_SCOPE` to their `Patches` while the SDK's code runs (around each step of
a stream, never while the app holds a chunk), and any other client's AFC goes straight through.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from graphmind.adapter import NodeSpec, Patches

from . import _describe, _edit

_SCOPE: contextvars.ContextVar[Patches | None] = contextvars.ContextVar(
    "graphmind_google_genai", default=None
)


def _spec(function: Callable[..., Any], args: Any) -> NodeSpec:
    name = str(getattr(function, "__name__", "tool"))
    return NodeSpec(
        name, "tool", _describe.tool_input(args), edit=lambda value: _edit.tool_call(value, function)
    )


def wrap_invoke(original: Callable[..., Any], _state: Patches) -> Callable[..., Any]:
    """`_extra_utils.invoke_function_from_dict_args(args, function)`: the function's call, gated.

    The SDK converts the model's arguments for the function it is handed (its signature and type
    hints), so it is handed a wrapper with the function's signature (`functools.wraps`) whose call
    is the node; the tool's own error reaches the error gate, and the SDK wraps whatever ends
    the node as it would have."""

    def invoke_function_from_dict_args(args: Any, function_to_invoke: Callable[..., Any]) -> Any:
        state = _SCOPE.get()
        engine = state.engine() if state is not None else None
        if engine is None or not engine.live:
            return original(args, function_to_invoke)

        @functools.wraps(function_to_invoke)
        def gated(**converted: Any) -> Any:
            return engine.execute(
                _spec(function_to_invoke, args),
                lambda: function_to_invoke(**converted),
                describe_output=_describe.plain,
            )

        return original(args, gated)

    return invoke_function_from_dict_args


def wrap_ainvoke(original: Callable[..., Any], _state: Patches) -> Callable[..., Any]:
    """`_extra_utils.invoke_function_from_dict_args_async`: an async function's call, gated."""

    async def invoke_function_from_dict_args_async(args: Any, function_to_invoke: Callable[..., Any]) -> Any:
        state = _SCOPE.get()
        engine = state.engine() if state is not None else None
        if engine is None or not engine.live:
            return await original(args, function_to_invoke)

        @functools.wraps(function_to_invoke)
        async def gated(**converted: Any) -> Any:
            return await engine.aexecute(
                _spec(function_to_invoke, args),
                lambda: function_to_invoke(**converted),
                describe_output=_describe.plain,
            )

        return await original(args, gated)

    return invoke_function_from_dict_args_async


# ---- the scope: the public methods of an instrumented Models ---------------------------------------


def wrap_scope(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """`Models.generate_content`: AFC's tool calls inside it are this client's."""

    def generate_content(**kwargs: Any) -> Any:
        token = _SCOPE.set(state)
        try:
            return original(**kwargs)
        finally:
            _SCOPE.reset(token)

    return generate_content


def wrap_ascope(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """`AsyncModels.generate_content`."""

    async def generate_content(**kwargs: Any) -> Any:
        token = _SCOPE.set(state)
        try:
            return await original(**kwargs)
        finally:
            _SCOPE.reset(token)

    return generate_content


def wrap_stream_scope(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """`Models.generate_content_stream` (a generator): the scope is set while each step runs."""

    def generate_content_stream(**kwargs: Any) -> Iterator[Any]:
        stream = iter(original(**kwargs))  # the SDK's generator (or any iterable a test puts there)
        try:
            while True:
                token = _SCOPE.set(state)
                try:
                    chunk = next(stream)
                except StopIteration:
                    return
                finally:
                    _SCOPE.reset(token)
                yield chunk
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()

    return generate_content_stream


def wrap_astream_scope(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """`AsyncModels.generate_content_stream` (a coroutine that returns an async generator)."""

    async def generate_content_stream(**kwargs: Any) -> AsyncIterator[Any]:
        token = _SCOPE.set(state)
        try:
            stream = await original(**kwargs)
        finally:
            _SCOPE.reset(token)

        async def scoped() -> AsyncIterator[Any]:
            try:
                while True:
                    token = _SCOPE.set(state)
                    try:
                        chunk = await stream.__anext__()
                    except StopAsyncIteration:
                        return
                    finally:
                        _SCOPE.reset(token)
                    yield chunk
            finally:
                await stream.aclose()

        return scoped()

    return generate_content_stream
