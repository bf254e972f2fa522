"""GraphmindCallbackHandler beside other handlers: they see exactly what they see without it.

langchain-core's `AsyncCallbackManager.on_llm_start` dispatches the text-LLM start to the inline
handlers only when any is present (docs/langchain.md, "Upstream: inline handlers hide a text-LLM
start"); these tests fail if GraphMind's handler is one of those inline handlers at that moment.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import FakeListLLM
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.tools import tool
from langchain_core.tracers.context import collect_runs

import graphmind
from graphmind.testing import FakeHub
from graphmind_langchain import GraphmindCallbackHandler


class Recorder(BaseCallbackHandler):
    """A plain (not inline) handler, like a tracer: records the events it is given."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def on_llm_start(self, serialized: Any, prompts: Any, **kwargs: Any) -> None:
        self.events.append("llm_start")

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.events.append("chat_start")

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.events.append("llm_end")

    def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        self.events.append("tool_start")

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self.events.append("tool_end")


def _names(events: list[dict[str, Any]]) -> list[str]:
    return [e["event"] for e in events]


@pytest.mark.parametrize("attached", [False, True])
async def test_astream_events_of_an_async_text_llm_sees_its_start_and_end(
    hub: FakeHub, attached: bool
) -> None:
    client = graphmind.Client(app="lc", url=hub.url if attached else "ws://127.0.0.1:9", retry_interval=0.2)
    try:
        if attached:
            assert client.ready(5)
        llm = FakeListLLM(responses=["hello"])
        handler = GraphmindCallbackHandler(client)
        bare = [e async for e in llm.astream_events("hi", version="v2")]
        seen = [e async for e in llm.astream_events("hi", version="v2", config={"callbacks": [handler]})]
        assert _names(seen) == _names(bare)
        assert "on_llm_start" in _names(seen) and "on_llm_end" in _names(seen)
        if attached:
            hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "llm:step")
    finally:
        client.dispose()


async def test_collect_runs_around_an_async_text_llm_sees_one_run(client: graphmind.Client) -> None:
    llm = FakeListLLM(responses=["hello"])
    with collect_runs() as runs:
        assert await llm.ainvoke("hi", config={"callbacks": [GraphmindCallbackHandler(client)]}) == "hello"
    assert len(runs.traced_runs) == 1 and runs.traced_runs[0].run_type == "llm"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # astream_log is deprecated, still supported
async def test_astream_log_of_an_async_text_llm_is_unchanged(client: graphmind.Client) -> None:
    llm = FakeListLLM(responses=["hello"])
    bare = [p.ops async for p in llm.astream_log("hi")]
    seen = [
        p.ops async for p in llm.astream_log("hi", config={"callbacks": [GraphmindCallbackHandler(client)]})
    ]
    assert [[op["path"] for op in ops] for ops in seen] == [[op["path"] for op in ops] for ops in bare]


@pytest.mark.parametrize("kind", ["text", "chat", "tool"])
async def test_a_plain_handler_beside_it_gets_every_start_and_end_on_the_async_path(
    client: graphmind.Client, hub: FakeHub, kind: str
) -> None:
    @tool
    async def search(query: str) -> str:
        """Search."""
        return query

    runnable: Any = {
        "text": FakeListLLM(responses=["a", "b"]),
        "chat": FakeListChatModel(responses=["a", "b"]),
        "tool": search,
    }[kind]
    arg: Any = {"query": "q"} if kind == "tool" else "hi"
    recorder = Recorder()
    await runnable.abatch([arg, arg], config={"callbacks": [GraphmindCallbackHandler(client), recorder]})
    start = {"text": "llm_start", "chat": "chat_start", "tool": "tool_start"}[kind]
    end = "tool_end" if kind == "tool" else "llm_end"
    assert sorted(recorder.events) == sorted([start, start, end, end])
    node = "tool:search" if kind == "tool" else "llm:step"
    hub.wait_for(lambda: len([e for e in hub.of_type("node.finished") if e["nodeId"] == node]) == 2)


async def test_a_held_async_text_llm_start_still_holds_and_the_tracer_sees_the_run(
    client: graphmind.Client, hub: FakeHub
) -> None:
    hub.set_debug(breakpoints=[("llm:step", "before")])
    llm = FakeListLLM(responses=["hello"])
    recorder = Recorder()
    task = asyncio.ensure_future(
        llm.ainvoke("hi", config={"callbacks": [GraphmindCallbackHandler(client), recorder]})
    )
    paused = await asyncio.to_thread(hub.next_paused)
    assert not task.done() and "llm_end" not in recorder.events
    hub.resolve(paused["gateId"], "continue")
    assert await task == "hello"
    assert recorder.events == ["llm_start", "llm_end"]


def test_the_handler_stays_inline_for_every_other_callback() -> None:
    # chat-model, tool, chain, token and ending callbacks keep running on the loop (no executor hop)
    assert GraphmindCallbackHandler().run_inline is True
