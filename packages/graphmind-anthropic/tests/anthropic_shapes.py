"""Every covered call shape, written once for `Anthropic` and `AsyncAnthropic`.

A shape takes a client and returns (the type of what the app got, a plain snapshot of everything
the app can read from it), so a test can compare an instrumented client with a bare one field for
field. Ids are deterministic on the fake provider, so snapshots of equal replies are equal.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from anthropic import Anthropic, AsyncAnthropic

from graphmind_anthropic.testing import FakeAnthropic

MODEL = "claude-test"
SYSTEM = "You plan trips."
MESSAGES = [{"role": "user", "content": "Plan a day in Cairo"}]
TOOLS = [
    {
        "name": "search_flights",
        "description": "Flights to a city",
        "input_schema": {"type": "object", "properties": {"to": {"type": "string"}}},
    }
]
TEXT = "Visit the pyramids at Giza, then the Egyptian Museum."
TOOL_USE = FakeAnthropic.tool_use("search_flights", {"to": "CAI"}, tool_use_id="toolu_1")


async def _v(x: Any) -> Any:
    return await x if inspect.isawaitable(x) else x


async def _list(stream: Any) -> list[Any]:
    if hasattr(stream, "__aiter__"):
        return [item async for item in stream]
    return list(stream)


def _dump(x: Any) -> Any:
    return x.model_dump(mode="json", warnings=False) if hasattr(x, "model_dump") else x


async def _enter(cm: Any, body: Callable[[Any], Awaitable[Any]]) -> Any:
    if hasattr(cm, "__aenter__"):
        async with cm as inner:
            return await body(inner)
    with cm as inner:
        return await body(inner)


def _kw(tools: bool) -> dict[str, Any]:
    kw: dict[str, Any] = {"model": MODEL, "max_tokens": 256, "system": SYSTEM, "messages": MESSAGES}
    if tools:
        kw["tools"] = TOOLS
    return kw


def create(tools: bool = False) -> Callable[[Any], Awaitable[tuple[type, Any]]]:
    async def shape(c: Any) -> tuple[type, Any]:
        r = await _v(c.messages.create(**_kw(tools)))
        return type(r), _dump(r)

    return shape


def create_stream(tools: bool = False) -> Callable[[Any], Awaitable[tuple[type, Any]]]:
    async def shape(c: Any) -> tuple[type, Any]:
        s = await _v(c.messages.create(**_kw(tools), stream=True))
        return type(s), [_dump(e) for e in await _list(s)]

    return shape


def stream_helper(tools: bool = False) -> Callable[[Any], Awaitable[tuple[type, Any]]]:
    """The helper's text stream, then its events (none left), then get_final_message()."""

    async def shape(c: Any) -> tuple[type, Any]:
        async def body(stream: Any) -> tuple[type, Any]:
            text = await _list(stream.text_stream)
            final = await _v(stream.get_final_message())
            return type(stream), {"text": text, "final": _dump(final)}

        return await _enter(c.messages.stream(**_kw(tools)), body)

    return shape


def stream_events(tools: bool = False) -> Callable[[Any], Awaitable[tuple[type, Any]]]:
    async def shape(c: Any) -> tuple[type, Any]:
        async def body(stream: Any) -> tuple[type, Any]:
            return type(stream), [_dump(e) for e in await _list(stream)]

        return await _enter(c.messages.stream(**_kw(tools)), body)

    return shape


async def parse(c: Any) -> tuple[type, Any]:
    r = await _v(c.messages.parse(**_kw(False)))
    return type(r), _dump(r)


async def raw_create(c: Any) -> tuple[type, Any]:
    r = await _v(c.messages.with_raw_response.create(**_kw(False)))
    return type(r), _dump(await _v(r.parse()))


async def raw_create_stream(c: Any) -> tuple[type, Any]:
    r = await _v(c.messages.with_raw_response.create(**_kw(False), stream=True))
    s = await _v(r.parse())
    return type(r), [_dump(e) for e in await _list(s)]


async def streaming_response(c: Any) -> tuple[type, Any]:
    async def body(r: Any) -> tuple[type, Any]:
        return type(r), _dump(await _v(r.parse()))

    return await _enter(c.messages.with_streaming_response.create(**_kw(False)), body)


async def beta_create(c: Any) -> tuple[type, Any]:
    r = await _v(c.beta.messages.create(**_kw(True)))
    return type(r), _dump(r)


async def beta_stream(c: Any) -> tuple[type, Any]:
    async def body(stream: Any) -> tuple[type, Any]:
        text = await _list(stream.text_stream)
        return type(stream), {"text": text, "final": _dump(await _v(stream.get_final_message()))}

    return await _enter(c.beta.messages.stream(**_kw(False)), body)


# name -> (shape, the reply to script)
SHAPES: dict[str, tuple[Callable[[Any], Awaitable[tuple[type, Any]]], Any]] = {
    "create": (create(), TEXT),
    "create_tool_use": (create(True), TOOL_USE),
    "create_stream": (create_stream(), TEXT),
    "create_stream_tool_use": (create_stream(True), TOOL_USE),
    "stream_helper": (stream_helper(), TEXT),
    "stream_helper_tool_use": (stream_helper(True), TOOL_USE),
    "stream_events": (stream_events(), TEXT),
    "parse": (parse, TEXT),
    "raw_create": (raw_create, TEXT),
    "raw_create_stream": (raw_create_stream, TEXT),
    "streaming_response": (streaming_response, TEXT),
    "beta_create": (beta_create, TOOL_USE),
    "beta_stream": (beta_stream, TEXT),
}


def new_client(fake: FakeAnthropic, is_async: bool, **options: Any) -> Any:
    options.setdefault("max_retries", 0)
    cls = AsyncAnthropic if is_async else Anthropic
    return cls(base_url=fake.base_url, api_key="test-key", **options)


async def close(client: Any) -> None:
    await _v(client.close())
