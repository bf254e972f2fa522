"""What the tests share: the request, the four call modes, reading a stream, the hub's endings."""

from __future__ import annotations

from typing import Any

import litellm

from graphmind.testing import FakeHub
from graphmind_openai.testing import TRIP_MESSAGES, TRIP_TOOLS

MODEL = "openai/gpt-4o-mini"  # in LiteLLM's bundled cost map: its cost is recorded
MESSAGES = TRIP_MESSAGES
TOOLS = TRIP_TOOLS


def ends(hub: FakeHub, count: int = 1, node_id: str = "llm:step") -> list[dict[str, Any]]:
    """The first `count` endings (node.finished or node.error) of `node_id`, waiting for them."""
    kinds = ("node.finished", "node.error")
    hub.wait_for(
        lambda: sum(1 for e in hub.events if e["type"] in kinds and e["nodeId"] == node_id) >= count,
        what=f"{node_id} endings",
    )
    return [e for e in hub.events if e["type"] in kinds and e["nodeId"] == node_id]


async def complete(is_async: bool, **kwargs: Any) -> Any:
    """`litellm.completion(**kwargs)`, or `await litellm.acompletion(**kwargs)`."""
    if is_async:
        return await litellm.acompletion(**kwargs)
    return litellm.completion(**kwargs)


async def drain(is_async: bool, stream: Any) -> list[Any]:
    """Every chunk of a LiteLLM stream, read the way the app would."""
    if is_async:
        return [chunk async for chunk in stream]
    return list(stream)


def text_of(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


MODES = [(False, False), (False, True), (True, False), (True, True)]
MODE_IDS = ["sync", "sync-stream", "async", "async-stream"]


async def aends(hub: FakeHub, count: int = 1, node_id: str = "llm:step") -> list[dict[str, Any]]:
    """`ends` from a test's event loop: LiteLLM's async success and failure handlers are tasks on
    this loop, so the wait must not block it."""
    import asyncio

    return await asyncio.to_thread(ends, hub, count, node_id)
