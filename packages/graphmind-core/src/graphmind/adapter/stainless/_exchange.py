"""The HTTP side of one call: the `Sdk` an adapter describes, the `Exchange` its `_post` wrapper and
its send hook share through a contextvar, and the synthetic `Reply` the send hook answers with.

Duck-typed on purpose: a `Reply` builds its response with the module of the request's own flavour
(`httpx2`, or legacy `httpx` when the app passed `http_client=httpx.Client()`), so neither an SDK nor
httpx is imported here.
"""

from __future__ import annotations

import contextvars
import functools
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._api import Api


@dataclass
class Reply:
    """A response to hand the SDK instead of sending the request: status, headers, body bytes."""

    content: bytes
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    described: Any = None  # (output, usage) of an injected body, for the node

    def build(self, request: Any) -> Any:
        """A response of the request's own httpx flavour."""
        module = sys.modules[type(request).__module__.split(".")[0]]
        return module.Response(self.status, headers=self.headers, content=self.content, request=request)


def reply_for(api: Api, body: Mapping[str, Any], stream: bool) -> Reply:
    """The synthetic HTTP reply carrying `body` (JSON, or SSE when the call streams)."""
    if stream:
        return Reply(api.to_sse(body), headers=[("content-type", "text/event-stream")])
    return Reply(json.dumps(body).encode(), headers=[("content-type", "application/json")])


_DROP_ON_REPLAY = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def recorded_reply(response: Any) -> Reply:
    """A reply that was read whole (for its after gate), to hand the app as the SDK would have."""
    headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _DROP_ON_REPLAY]
    return Reply(response.content, response.status_code, headers)


@dataclass
class Exchange:
    """Shared between the `_post` wrapper and the send hook for one call (the SDK's contextvar)."""

    reply: Reply | None = None  # set: answer with this instead of sending
    response: Any = None  # the last HTTP response the SDK received (after its own retries)
    sent: int = 0
    answered: int = 0


@dataclass(frozen=True, eq=False)
class Sdk:
    """What the call path needs of one SDK, beyond its API rows."""

    name: str  # as a warning names it: "OpenAI"
    key: str  # warning keys and the contextvar's name: "openai"
    stream_types: tuple[type, ...]  # the SDK's own `Stream` / `AsyncStream`: teed from their typed items
    model_type: type = (
        object  # the base of its typed results (`Api.describe_result` is asked only about those)
    )
    exchange: contextvars.ContextVar[Exchange | None] = field(init=False)

    def __post_init__(self) -> None:
        # One variable per SDK: an app may hand the same httpx client to two SDKs' clients.
        var: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar(
            f"graphmind_{self.key}_exchange", default=None
        )
        object.__setattr__(self, "exchange", var)


def send_wrapper(original: Callable[..., Any], sdk: Sdk, is_async: bool) -> Callable[..., Any]:
    """The send hook (one call per HTTP attempt): inside a gated call, answer with the exchange's
    reply when it has one (no request leaves the process), else send, and keep the response."""
    var = sdk.exchange
    if is_async:

        @functools.wraps(original)
        async def asend(request: Any, *args: Any, **kwargs: Any) -> Any:
            exchange = var.get()
            if exchange is None:
                return await original(request, *args, **kwargs)
            if exchange.reply is not None:
                exchange.answered += 1
                exchange.response = exchange.reply.build(request)
            else:
                exchange.sent += 1
                exchange.response = await original(request, *args, **kwargs)
            return exchange.response

        return asend

    @functools.wraps(original)
    def send(request: Any, *args: Any, **kwargs: Any) -> Any:
        exchange = var.get()
        if exchange is None:
            return original(request, *args, **kwargs)
        if exchange.reply is not None:
            exchange.answered += 1
            exchange.response = exchange.reply.build(request)
        else:
            exchange.sent += 1
            exchange.response = original(request, *args, **kwargs)
        return exchange.response

    return send
