"""Every covered call shape, written once for `OpenAI` and `AsyncOpenAI`.

A shape takes a client and returns (the type of what the app got, a plain snapshot of everything
the app can read from it), so a test can compare an instrumented client with a bare one field for
field. `REPLY[name]` is the scripted provider reply the shape needs.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any

from openai import AsyncOpenAI
from pydantic import BaseModel

from graphmind_openai.testing import TRIP_MESSAGES, TRIP_TOOLS

MODEL = "gpt-test"
MESSAGES = TRIP_MESSAGES
TOOLS = TRIP_TOOLS
RESPONSES_TOOLS = [
    {
        "type": "function",
        "name": "search_flights",
        "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
    }
]
TEXT = "Visit the pyramids at Giza, then the Egyptian Museum."
CITY = '{"city": "Cairo", "days": 2}'
TOOL_CALL = {
    "content": None,
    "tool_calls": [{"id": "call_1", "name": "search_flights", "arguments": json.dumps({"to": "CAI"})}],
}


class Trip(BaseModel):
    city: str
    days: int


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


def _is_async(c: Any) -> bool:
    return isinstance(c, AsyncOpenAI)


# ---- chat.completions ------------------------------------------------------------------------------------


async def chat_create(c: Any) -> tuple[type, Any]:
    r = await _v(c.chat.completions.create(model=MODEL, messages=MESSAGES))
    return type(r), _dump(r)


async def chat_create_tools(c: Any) -> tuple[type, Any]:
    r = await _v(c.chat.completions.create(model=MODEL, messages=MESSAGES, tools=TOOLS))
    return type(r), _dump(r)


async def chat_create_stream(c: Any) -> tuple[type, Any]:
    s = await _v(
        c.chat.completions.create(
            model=MODEL, messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
    )
    return type(s), [_dump(x) for x in await _list(s)]


async def chat_create_stream_tools(c: Any) -> tuple[type, Any]:
    s = await _v(c.chat.completions.create(model=MODEL, messages=MESSAGES, tools=TOOLS, stream=True))
    return type(s), [_dump(x) for x in await _list(s)]


async def chat_parse(c: Any) -> tuple[type, Any]:
    r = await _v(c.chat.completions.parse(model=MODEL, messages=MESSAGES, response_format=Trip))
    return type(r), (_dump(r), _dump(r.choices[0].message.parsed))


async def chat_stream(c: Any) -> tuple[type, Any]:
    async def body(stream: Any) -> Any:
        events = [_dump(e) for e in await _list(stream)]
        final = await _v(stream.get_final_completion())
        return type(stream), (events, _dump(final))

    return await _enter(c.chat.completions.stream(model=MODEL, messages=MESSAGES), body)


async def chat_raw(c: Any) -> tuple[type, Any]:
    raw = await _v(c.chat.completions.with_raw_response.create(model=MODEL, messages=MESSAGES))
    parsed = await _v(raw.parse())
    return type(raw), (raw.status_code, raw.headers.get("content-type"), _dump(parsed))


async def chat_raw_stream(c: Any) -> tuple[type, Any]:
    raw = await _v(c.chat.completions.with_raw_response.create(model=MODEL, messages=MESSAGES, stream=True))
    stream = await _v(raw.parse())
    return type(raw), (raw.status_code, type(stream).__name__, [_dump(x) for x in await _list(stream)])


async def chat_raw_parse(c: Any) -> tuple[type, Any]:
    raw = await _v(
        c.chat.completions.with_raw_response.parse(model=MODEL, messages=MESSAGES, response_format=Trip)
    )
    parsed = await _v(raw.parse())
    return type(raw), _dump(parsed)


async def chat_streaming_response(c: Any) -> tuple[type, Any]:
    async def body(resp: Any) -> Any:
        parsed = await _v(resp.parse())
        return type(resp), (resp.status_code, _dump(parsed))

    return await _enter(
        c.chat.completions.with_streaming_response.create(model=MODEL, messages=MESSAGES), body
    )


async def chat_streaming_response_stream(c: Any) -> tuple[type, Any]:
    async def body(resp: Any) -> Any:
        lines = await _list(resp.iter_lines())
        return type(resp), lines

    return await _enter(
        c.chat.completions.with_streaming_response.create(model=MODEL, messages=MESSAGES, stream=True), body
    )


# ---- responses ---------------------------------------------------------------------------------------------


async def responses_create(c: Any) -> tuple[type, Any]:
    r = await _v(c.responses.create(model=MODEL, input="Plan a day in Cairo", instructions="You plan trips."))
    return type(r), (_dump(r), r.output_text)


async def responses_create_tools(c: Any) -> tuple[type, Any]:
    r = await _v(c.responses.create(model=MODEL, input="Plan a day in Cairo", tools=RESPONSES_TOOLS))
    return type(r), _dump(r)


async def responses_create_stream(c: Any) -> tuple[type, Any]:
    s = await _v(c.responses.create(model=MODEL, input="Plan a day in Cairo", stream=True))
    return type(s), [_dump(x) for x in await _list(s)]


async def responses_create_stream_tools(c: Any) -> tuple[type, Any]:
    s = await _v(
        c.responses.create(model=MODEL, input="Plan a day in Cairo", tools=RESPONSES_TOOLS, stream=True)
    )
    return type(s), [_dump(x) for x in await _list(s)]


async def responses_stream(c: Any) -> tuple[type, Any]:
    async def body(stream: Any) -> Any:
        events = [_dump(e) for e in await _list(stream)]
        final = await _v(stream.get_final_response())
        return type(stream), (events, _dump(final))

    return await _enter(c.responses.stream(model=MODEL, input="Plan a day in Cairo"), body)


async def responses_parse(c: Any) -> tuple[type, Any]:
    r = await _v(c.responses.parse(model=MODEL, input="Plan a day in Cairo", text_format=Trip))
    return type(r), (_dump(r), _dump(r.output_parsed))


async def responses_raw(c: Any) -> tuple[type, Any]:
    raw = await _v(c.responses.with_raw_response.create(model=MODEL, input="Plan a day in Cairo"))
    parsed = await _v(raw.parse())
    return type(raw), (raw.status_code, _dump(parsed))


async def responses_streaming_response(c: Any) -> tuple[type, Any]:
    async def body(resp: Any) -> Any:
        parsed = await _v(resp.parse())
        return type(resp), _dump(parsed)

    return await _enter(
        c.responses.with_streaming_response.create(model=MODEL, input="Plan a day in Cairo"), body
    )


SHAPES: dict[str, tuple[Callable[[Any], Awaitable[tuple[type, Any]]], Any, bool]] = {
    # name: (shape, the provider's scripted reply, does it stream)
    "chat.create": (chat_create, TEXT, False),
    "chat.create(tools)": (chat_create_tools, TOOL_CALL, False),
    "chat.create(stream)": (chat_create_stream, TEXT, True),
    "chat.create(stream, tools)": (chat_create_stream_tools, TOOL_CALL, True),
    "chat.parse": (chat_parse, CITY, False),
    "chat.stream": (chat_stream, TEXT, True),
    "chat.with_raw_response.create": (chat_raw, TEXT, False),
    "chat.with_raw_response.create(stream)": (chat_raw_stream, TEXT, True),
    "chat.with_raw_response.parse": (chat_raw_parse, CITY, False),
    "chat.with_streaming_response.create": (chat_streaming_response, TEXT, False),
    "chat.with_streaming_response.create(stream)": (chat_streaming_response_stream, TEXT, True),
    "responses.create": (responses_create, TEXT, False),
    "responses.create(tools)": (responses_create_tools, TOOL_CALL, False),
    "responses.create(stream)": (responses_create_stream, TEXT, True),
    "responses.create(stream, tools)": (responses_create_stream_tools, TOOL_CALL, True),
    "responses.stream": (responses_stream, TEXT, True),
    "responses.parse": (responses_parse, CITY, False),
    "responses.with_raw_response.create": (responses_raw, TEXT, False),
    "responses.with_streaming_response.create": (responses_streaming_response, TEXT, False),
}
