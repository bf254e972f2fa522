"""A scripted `BaseLlm` (ADK's own model interface, offline) and tools that count their calls."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types
from pydantic import Field

APP = "graphmind-tests"
USER = "u"


class ModelDown(Exception):
    """What a failing model call raises (ADK does not retry a model error by itself)."""


class ToolDown(Exception):
    """What a failing tool raises."""


def text_response(text: str, partial: bool | None = None) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]), partial=partial)


def call_response(name: str, args: dict[str, Any], call_id: str) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


class ScriptedLlm(BaseLlm):
    """`script(request) -> [LlmResponse, ...]`: what each call yields (streamed calls yield them all,
    unstreamed ones the last). Counts the calls that reached it, failed ones too."""

    model: str = "scripted"
    calls: int = 0
    fail: int = 0
    script: Any = None
    raised: list[BaseException] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)
    # A sync `Runner.run` reads the model in a thread of its own, ahead of the app: with `pace` set,
    # each streamed response after the first waits until the app has read the one before
    # (`paced`), as a provider's stream waits for its reader.
    pace: Any = None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        self.requests.append(llm_request)
        if self.fail:
            self.fail -= 1
            error = ModelDown("the model is down")
            self.raised.append(error)
            raise error
        responses: list[LlmResponse] = self.script(llm_request)
        if not stream:
            responses = responses[-1:]
        for i, response in enumerate(responses):
            if i and self.pace is not None:
                while not self.pace.is_set():  # a condition, checked on every loop tick
                    await asyncio.sleep(0.001)
                self.pace.clear()
            await asyncio.sleep(0)
            yield response


def paced(model: ScriptedLlm, events: Any) -> Iterator[Event]:
    """The sync runner's events, each read one letting the model stream its next response."""
    model.pace = threading.Event()
    try:
        for event in events:
            yield event
            model.pace.set()
    finally:
        events.close()
        model.pace = None


async def apaced(model: ScriptedLlm, events: Any) -> AsyncIterator[Event]:
    """`paced` for `Runner.run_async`, which runs the agent in a task of its own too."""
    model.pace = threading.Event()
    try:
        async for event in events:
            yield event
            model.pace.set()
    finally:
        await events.aclose()
        model.pace = None


def last_tool_result(request: LlmRequest) -> dict[str, Any] | None:
    for content in reversed(request.contents):
        for part in content.parts or []:
            if part.function_response is not None:
                return dict(part.function_response.response or {})
    return None


def reply_script(text: str = "the real reply") -> Callable[[LlmRequest], list[LlmResponse]]:
    def script(_request: LlmRequest) -> list[LlmResponse]:
        half = len(text) // 2
        return [text_response(text[:half], True), text_response(text[half:], True), text_response(text)]

    return script


def tool_script(name: str, args: dict[str, Any]) -> Callable[[LlmRequest], list[LlmResponse]]:
    """Calls `name` first; once a tool result is in the transcript, answers with it as text."""
    counter = {"n": 0}

    def script(request: LlmRequest) -> list[LlmResponse]:
        result = last_tool_result(request)
        if result is None:
            counter["n"] += 1
            return [call_response(name, args, f"call-{counter['n']}")]
        return [text_response(f"result: {result}")]

    return script


class Counter:
    """Tools that count the calls that reached their body."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.fail = 0
        self.raised: list[BaseException] = []
        self.args: list[dict[str, Any]] = []

    def add(self, a: int, b: int) -> dict[str, Any]:
        """Adds two numbers."""
        self.calls["add"] = self.calls.get("add", 0) + 1
        self.args.append({"a": a, "b": b})
        if self.fail:
            self.fail -= 1
            error = ToolDown("the adder is down")
            self.raised.append(error)
            raise error
        return {"sum": a + b}

    def weather(self, city: str) -> dict[str, Any]:
        """The weather in a city."""
        self.calls["weather"] = self.calls.get("weather", 0) + 1
        return {"city": city, "sky": "clear"}


def runner(agent: Any, plugins: list[Any] | None = None) -> Runner:
    return Runner(
        app=App(name=APP, root_agent=agent, plugins=plugins or []),
        session_service=InMemorySessionService(),  # type: ignore[no-untyped-call]
        auto_create_session=True,
    )


def agent(model: ScriptedLlm, tools: list[Any] | None = None, name: str = "assistant") -> LlmAgent:
    return LlmAgent(name=name, model=model, tools=tools or [], instruction="Be brief.")


def message(text: str = "hello") -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


_SESSIONS = {"n": 0}


def session_id() -> str:
    _SESSIONS["n"] += 1
    return f"s{_SESSIONS['n']}"


def run_sync(r: Runner, text: str = "hello", stream: bool = False) -> Any:
    config = RunConfig(streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE)
    return r.run(user_id=USER, session_id=session_id(), new_message=message(text), run_config=config)


def run_async(r: Runner, text: str = "hello", stream: bool = False) -> Any:
    config = RunConfig(streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE)
    return r.run_async(user_id=USER, session_id=session_id(), new_message=message(text), run_config=config)


async def collect(r: Runner, text: str = "hello") -> list[Event]:
    return [e async for e in run_async(r, text)]


def final_text(events: list[Event]) -> str | None:
    for event in reversed(events):
        if event.content is not None and not event.partial:
            texts = [p.text for p in event.content.parts or [] if p.text]
            if texts:
                return "".join(texts)
    return None


def tool_results(events: list[Event]) -> list[dict[str, Any]]:
    return [
        dict(p.function_response.response or {})
        for e in events
        if e.content is not None
        for p in e.content.parts or []
        if p.function_response is not None
    ]


def function_calls(events: list[Event]) -> list[types.FunctionCall]:
    return [
        p.function_call
        for e in events
        if e.content is not None
        for p in e.content.parts or []
        if p.function_call is not None
    ]
