"""The agents the tests run, on the SDK's own models over a fresh `AsyncOpenAI` per call (an httpx
client belongs to the event loop it was first used on; `run_sync` runs each call on a loop of its own)."""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool
from openai import AsyncOpenAI

from graphmind_openai.testing import FakeOpenAI

REPLY = "Visit the pyramids."
PROMPT = "Plan a day in Cairo"


def model_for(fake: FakeOpenAI, api: str = "chat") -> Any:
    client = AsyncOpenAI(base_url=fake.base_url, api_key="test-key", max_retries=0)
    if api == "responses":
        return OpenAIResponsesModel(model="gpt-4o-mini", openai_client=client)
    return OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)


def run_sync(agent: Agent[Any], prompt: str = PROMPT, **kwargs: Any) -> Any:
    """`Runner.run_sync` as a sync app calls it; from a thread with a running loop (the kit's sync
    cases run on the test's loop thread), on a thread of its own, in the caller's context (its run)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return Runner.run_sync(agent, prompt, **kwargs)
    ctx = contextvars.copy_context()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = ctx.run(Runner.run_sync, agent, prompt, **kwargs)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


async def stream_events(agent: Agent[Any], prompt: str = PROMPT, limit: int | None = None) -> Any:
    """The raw model events of `Runner.run_streamed`, read as an app reads them; an app that stops
    early cancels the run (`RunResultStreaming.cancel()`, the SDK's way to stop a streamed run)."""
    result = Runner.run_streamed(agent, prompt)
    try:
        async for event in result.stream_events():
            if event.type == "raw_response_event":
                yield event
    finally:
        result.cancel()


def sync_stream(make: Callable[[], Any]) -> Iterator[Any]:
    """An async stream read from sync code: its own event loop on a thread of its own."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    stream = make()
    try:
        while True:
            try:
                yield asyncio.run_coroutine_threadsafe(stream.__anext__(), loop).result()
            except StopAsyncIteration:
                return
    finally:
        asyncio.run_coroutine_threadsafe(stream.aclose(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


class Tool:
    """A function tool whose calls are counted and which can fail once."""

    def __init__(self, *, failure_error_function: Any = "default") -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = 0
        self.raised: BaseException | None = None
        kw = {} if failure_error_function == "default" else {"failure_error_function": failure_error_function}

        @function_tool(name_override="search_flights", **kw)
        def search_flights(to: str) -> str:
            """Flights to a city."""
            self.calls.append({"to": to})
            if self.fail:
                self.fail -= 1
                self.raised = RuntimeError(f"no flights to {to} (fake)")
                raise self.raised
            return f"3 flights to {to}"

        self.tool = search_flights


def tool_then_text(body: dict[str, Any]) -> Any:
    """The fake's reply to a conversation: call the tool first, then answer once the tool answered."""
    items = body.get("messages") or body.get("input") or []
    answered = any(
        isinstance(i, dict) and (i.get("role") == "tool" or i.get("type") == "function_call_output")
        for i in items
    )
    return REPLY if answered else FakeOpenAI.tool_call("search_flights", {"to": "CAI"})


def tool_outputs(fake: FakeOpenAI) -> list[str]:
    """The tool results the model was sent, in order (either API's shape)."""
    out = []
    for request in fake.requests:
        body = request.body if isinstance(request.body, dict) else {}
        for item in body.get("messages") or body.get("input") or []:
            if isinstance(item, dict) and item.get("role") == "tool":
                out.append(item.get("content"))
            elif isinstance(item, dict) and item.get("type") == "function_call_output":
                out.append(item.get("output"))
    return out


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
