"""Issue 39: no blocking call on a running event loop's thread, in core or any adapter.

An asyncio app makes its first gated calls (a fresh GraphMind client each time, so the attach
check, the first connect and the wait for the hub all happen inside them) through core's async
API and through every adapter's async path, attached (a hub listening) and detached (nothing
listening: the attach check's probe is refused). A spy records every blocking socket call
(`connect`, `connect_ex`, `send*`, `recv*` on a socket with a timeout, `getaddrinfo`,
`create_connection`) and every blocking wait for the hub (`Transport.ready` with a timeout) made
on the loop's thread while the loop runs: there must be none. asyncio's own non-blocking sockets
(timeout 0: the fake providers' HTTP clients) are not blocking calls.

Before the fix, the first gated call probed the hub's port with a blocking `socket.connect` on
the loop's thread (the mcp suite's blockbuster checker failed with `BlockingError('Blocking call to
socket.socket.connect')`), and a sync hook on a running loop waited for the welcome there.
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

import graphmind
from graphmind._wire import transport as _transport
from graphmind.testing import FakeHub

# LiteLLM fetches its model cost map at import (a blocking request of its own) unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

Case = Callable[[graphmind.Client], Awaitable[Any]]


class LoopSpy:
    """Blocking calls made on the loop's thread while `watching` (set from inside the loop)."""

    def __init__(self) -> None:
        self.loop_thread: int | None = None
        self.calls: list[str] = []

    def on_loop(self) -> bool:
        return self.loop_thread == threading.get_ident() and asyncio._get_running_loop() is not None

    def record(self, what: str) -> None:
        if self.on_loop():
            self.calls.append(what)


def _spy_method(monkeypatch: pytest.MonkeyPatch, spy: LoopSpy, cls: Any, name: str, always: bool) -> None:
    original = getattr(cls, name)

    @functools.wraps(original)
    def spied(self: Any, *args: Any, **kwargs: Any) -> Any:
        # A socket in non-blocking mode (timeout 0.0: asyncio's own) cannot block.
        if always or self.gettimeout() != 0.0:
            spy.record(f"socket.{name}")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, spied)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopSpy]:
    s = LoopSpy()
    for name in ("connect", "connect_ex", "send", "sendall", "recv", "recv_into", "accept"):
        _spy_method(monkeypatch, s, socket.socket, name, always=False)
    for module_fn in ("getaddrinfo", "create_connection"):
        original = getattr(socket, module_fn)

        def spied(*args: Any, _original: Any = original, _name: str = module_fn, **kwargs: Any) -> Any:
            s.record(f"socket.{_name}")
            return _original(*args, **kwargs)

        monkeypatch.setattr(socket, module_fn, spied)
    ready = _transport.Transport.ready

    def spied_ready(self: Any, timeout: float) -> bool:
        if timeout > 0:
            s.record(f"Transport.ready({timeout})")
        return ready(self, timeout)

    monkeypatch.setattr(_transport.Transport, "ready", spied_ready)
    yield s


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(params=["attached", "detached"])
def hub_url(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "detached":
        yield f"ws://127.0.0.1:{_closed_port()}/ingest"
        return
    with FakeHub() as hub:
        yield hub.url


# ---- the async paths ------------------------------------------------------------------------------
async def core_case(gm: graphmind.Client) -> Any:
    @gm.tool
    async def search(q: str) -> str:
        return q

    async with gm.run("blocking-spy"):
        first = await search("a")
    return first, await search("b"), await gm.aready(0.5)


async def openai_case(gm: graphmind.Client) -> Any:
    from openai import AsyncOpenAI

    from graphmind_openai import instrument_openai
    from graphmind_openai.testing import FakeOpenAI

    with FakeOpenAI() as fake:
        fake.script(["hello"])
        client = instrument_openai(AsyncOpenAI(base_url=fake.base_url, api_key="test"), session=gm)
        reply = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        await client.close()
    return reply.choices[0].message.content


async def anthropic_case(gm: graphmind.Client) -> Any:
    from anthropic import AsyncAnthropic

    from graphmind_anthropic import instrument_anthropic
    from graphmind_anthropic.testing import FakeAnthropic

    with FakeAnthropic() as fake:
        fake.script(["hello"])
        client = instrument_anthropic(AsyncAnthropic(base_url=fake.base_url, api_key="test"), session=gm)
        reply = await client.messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
        await client.close()
    return reply.content[0].text  # type: ignore[union-attr]


async def litellm_case(gm: graphmind.Client) -> Any:
    import litellm

    from graphmind_litellm import instrument_litellm, uninstrument_litellm
    from graphmind_openai.testing import FakeOpenAI

    with FakeOpenAI() as fake:
        fake.script(["hello"])
        assert instrument_litellm(session=gm)
        try:
            reply = await litellm.acompletion(
                model="openai/m",
                messages=[{"role": "user", "content": "hi"}],
                api_base=fake.base_url,
                api_key="test",
            )
        finally:
            uninstrument_litellm()
    return reply.choices[0].message.content


async def langchain_case(gm: graphmind.Client) -> Any:
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from graphmind_langchain import GraphmindCallbackHandler

    @tool
    async def lookup(q: str) -> str:
        """Looks q up."""
        return q

    config: Any = {"callbacks": [GraphmindCallbackHandler(gm)]}
    model = GenericFakeChatModel(messages=iter([AIMessage("hello")]))
    reply = await model.ainvoke("hi", config=config)
    return reply.content, await lookup.ainvoke({"q": "x"}, config=config)


async def llamaindex_case(gm: graphmind.Client) -> Any:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool

    from graphmind_llamaindex import gate_tools, instrument_llamaindex, uninstrument_llamaindex
    from graphmind_llamaindex.testing import ScriptedFunctionCallingLLM, tool_call

    async def search(query: str) -> str:
        """Searches."""
        return f"found {query}"

    llm = ScriptedFunctionCallingLLM(
        [{"content": "", "tool_calls": [tool_call("search", "c1", query="x")]}, "done"]
    )
    instrument_llamaindex(gm)
    try:
        agent = FunctionAgent(tools=gate_tools([FunctionTool.from_defaults(search)], session=gm), llm=llm)
        return str(await agent.run("go"))
    finally:
        uninstrument_llamaindex()


async def mcp_case(gm: graphmind.Client) -> Any:
    from mcp.client import Client
    from mcp.server.mcpserver import MCPServer

    from graphmind_mcp import instrument_mcp

    server = MCPServer("spy")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    async with Client(server) as client:
        instrument_mcp(client.session, client=gm)
        first = await client.session.call_tool("echo", {"text": "a"})
    async with Client(server) as client:
        instrument_mcp(client, client=graphmind.Client(app="spy-mcp-2", url=gm.options.url))
        second = await client.call_tool("echo", {"text": "b"})
    return first.content[0].text, second.content[0].text  # type: ignore[union-attr]


CASES: dict[str, Case] = {
    "core": core_case,
    "openai": openai_case,
    "anthropic": anthropic_case,
    "litellm": litellm_case,
    "langchain": langchain_case,
    "llamaindex": llamaindex_case,
    "mcp": mcp_case,
}


@pytest.mark.parametrize("name", list(CASES))
def test_no_blocking_call_on_the_loop_thread_during_the_first_gated_calls(
    name: str, hub_url: str, spy: LoopSpy
) -> None:
    gm = graphmind.Client(app=f"spy-{name}", url=hub_url)

    async def app() -> Any:
        spy.loop_thread = threading.get_ident()
        try:
            return await CASES[name](gm)
        finally:
            spy.loop_thread = None

    try:
        result = asyncio.run(app())
    finally:
        gm.dispose()
    assert result  # the app got its answers
    assert spy.calls == [], f"{name}: blocking calls on the event loop's thread: {spy.calls}"
