"""The two ways the tests reach a provider without a network: the loopback fake with the SDK's
default transport, and respx (which patches only legacy httpx, so the client gets
`http_client=httpx.Client()`)."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import respx
from openai import AsyncOpenAI, OpenAI

from graphmind_openai._inject import chat_sse, responses_sse
from graphmind_openai.testing import FakeError, FakeOpenAI

RESPX_BASE = "http://respx.test/v1"


class FakeProvider:
    kind = "fake"

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake
        self.clients: list[Any] = []

    def client(self, is_async: bool, **options: Any) -> Any:
        cls = AsyncOpenAI if is_async else OpenAI
        options.setdefault("max_retries", 0)
        client = cls(base_url=self.fake.base_url, api_key="test-key", **options)
        self.clients.append(client)
        return client

    async def aclose(self) -> None:
        for client in self.clients:
            result = client.close()
            if hasattr(result, "__await__"):
                await result

    def script(self, replies: list[Any]) -> None:
        self.fake.script(replies)

    @property
    def request_count(self) -> int:
        return self.fake.request_count


class RespxProvider:
    kind = "respx"

    def __init__(self, router: respx.Router) -> None:
        self.renderer = FakeOpenAI(chunks=6)  # its render() needs no server
        self.queue: deque[Any] = deque()
        self.count = 0
        router.post("/chat/completions").mock(side_effect=lambda r: self._answer("chat", r))
        router.post("/responses").mock(side_effect=lambda r: self._answer("responses", r))

    def _answer(self, api: str, request: httpx.Request) -> httpx.Response:
        self.count += 1
        body = json.loads(request.content)
        reply = self.queue.popleft() if self.queue else "ok"
        if isinstance(reply, FakeError):
            return httpx.Response(
                reply.status,
                json={"error": {"message": reply.message, "type": reply.type}},
                headers=dict(reply.headers),
            )
        rendered = self.renderer.render(api, body, reply)
        if not body.get("stream"):
            return httpx.Response(200, json=rendered)
        if api == "chat":
            content = chat_sse(
                rendered, 6, usage=bool((body.get("stream_options") or {}).get("include_usage"))
            )
        else:
            content = responses_sse(rendered, 6)
        return httpx.Response(200, content=content, headers={"content-type": "text/event-stream"})

    def client(self, is_async: bool, **options: Any) -> Any:
        options.setdefault("max_retries", 0)
        if is_async:
            return AsyncOpenAI(
                base_url=RESPX_BASE, api_key="test-key", http_client=httpx.AsyncClient(), **options
            )
        return OpenAI(base_url=RESPX_BASE, api_key="test-key", http_client=httpx.Client(), **options)

    def script(self, replies: list[Any]) -> None:
        self.queue.extend(replies)

    @property
    def request_count(self) -> int:
        return self.count


@contextmanager
def provider_of(kind: str, fake: FakeOpenAI) -> Iterator[Any]:
    if kind == "fake":
        yield FakeProvider(fake)
        return
    with respx.mock(base_url=RESPX_BASE, assert_all_called=False) as router:
        yield RespxProvider(router)
