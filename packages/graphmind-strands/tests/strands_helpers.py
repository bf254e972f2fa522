"""The agents the tests run: Strands' own `OpenAIModel` against the loopback OpenAI fake (which
counts requests), and two tools that count their bodies' runs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from strands import Agent, tool
from strands.models.openai import OpenAIModel

from graphmind.testing.threads import in_a_thread, sync_call
from graphmind_openai.testing import FakeOpenAI

__all__ = [
    "Bodies",
    "ToolDown",
    "agent",
    "in_a_thread",
    "model",
    "sync_call",
    "sync_stream",
    "tool_messages",
    "tools",
]


class ToolDown(Exception):
    """What a failing tool raises."""


@dataclass
class Bodies:
    """The two tools' bodies: each run counted, its arguments kept, `search` failing once when told."""

    searches: list[str] = field(default_factory=list)
    weathers: list[str] = field(default_factory=list)
    fail: BaseException | None = None


def model(fake: FakeOpenAI) -> OpenAIModel:
    return OpenAIModel(
        # a plain number (every phase, connect included: the SDK's default connect timeout, 5 s, is
        # shorter than twenty calls at once take to reach the loopback fake on a loaded 2-core
        # machine); not an httpx.Timeout, which openai 3.6x (httpx2 inside) refuses
        client_args={
            "base_url": fake.base_url,
            "api_key": "test",
            "max_retries": 0,
            "timeout": 120.0,
        },
        model_id="gpt-4o-mini",
    )


def tools(bodies: Bodies) -> list[Any]:
    @tool
    def search(q: str) -> str:
        """Search the web.

        Args:
            q: what to look for
        """
        bodies.searches.append(q)
        if bodies.fail is not None:
            error, bodies.fail = bodies.fail, None
            raise error
        return f"results for {q}"

    @tool
    def weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city
        """
        bodies.weathers.append(city)
        return f"sunny in {city}"

    return [search, weather]


def agent(fake: FakeOpenAI, bodies: Bodies, name: str = "researcher", **kwargs: Any) -> Agent:
    return Agent(
        model=model(fake),
        tools=tools(bodies),
        name=name,
        callback_handler=None,
        system_prompt="You research.",
        **kwargs,
    )


def tool_messages(request: Any) -> list[Any]:
    """The tool results a request to the fake carried (their content, JSON-decoded when it is)."""
    out = []
    for msg in request.body["messages"]:
        if msg.get("role") == "tool":
            content = msg.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content)
            try:
                out.append(json.loads(content))
            except (TypeError, ValueError):
                out.append(content)
    return out


def sync_stream(make: Callable[[], AsyncIterator[Any]]) -> Iterator[Any]:
    """An async stream read as a sync iterator on an event loop of its own (Strands has no sync
    stream API: a sync app drives `stream_async` so); closing it closes the stream."""
    loop = asyncio.new_event_loop()
    stream = make()
    try:
        while True:
            try:
                yield loop.run_until_complete(stream.__anext__())  # type: ignore[attr-defined]
            except StopAsyncIteration:
                return
    finally:
        loop.run_until_complete(stream.aclose())  # type: ignore[attr-defined]
        loop.close()
