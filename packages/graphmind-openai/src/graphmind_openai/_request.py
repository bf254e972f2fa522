"""One model call through the gate engine: `resource._post(path, ...)` as one `llm:step` node.

```
node.started ─► before ─► _post (SDK retries inside) ─► after ─► node.finished
                  │ inject: _post answered by a synthetic response (zero provider requests)
                  └─ error gate on the SDK's final exception: retry re-sends, inject answers, continue re-raises it
```

The core engine (`NodeExecution.run_sync` / `run_async`) drives the gates; this module supplies the
body (`_post` with a fresh `Exchange`), a `settle` hook (a live stream is teed and finished later; a
streamed body the after gate will hold is read whole and replayed to the app; a plain body is
described off the SDK's result) and `from_injected`. Every inject, and the replay of a stream that was
buffered for its after gate, goes through the SDK's own `_post` once more with `EXCHANGE.reply` set:
the `_send_request` hook then answers with a synthetic HTTP response instead of sending, and the SDK
builds the very type it would have built.
"""

from __future__ import annotations

import contextvars
import json
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from openai import AsyncStream, BaseModel, Stream

from graphmind.adapter import Engine, NodeExecution, NodeSpec, Settled

from ._apis import Api
from ._inject import Reply, reply_for
from ._provider_tools import hint_entry, observe
from ._stream import StreamRecorder, abandon, tee
from ._typed import TypedRecorder, tee_stream

RAW_RESPONSE_HEADER = (
    "X-Stainless-Raw-Response"  # openai/_constants.py: "true" (with_raw_response) or "stream"
)
_DROP_ON_REPLAY = frozenset({"content-encoding", "content-length", "transfer-encoding"})


@dataclass
class Exchange:
    """Shared between the `_post` wrapper and the `_send_request` hook for one call (a contextvar)."""

    reply: Reply | None = None  # set: answer with this instead of sending
    response: Any = None  # the last HTTP response the SDK received (after its own retries)
    sent: int = 0
    answered: int = 0


EXCHANGE: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar(
    "graphmind_openai_exchange", default=None
)


@dataclass
class Call:
    """What one `_post` call is, decided once before any gate."""

    api: Api
    hook: str
    engine: Engine
    path: str
    kwargs: dict[str, Any]
    body: Mapping[str, Any] = field(default_factory=dict)
    stream: bool = False
    body_pending: bool = False  # the SDK has not read the body when `_post` returns

    @classmethod
    def of(cls, api: Api, hook: str, engine: Engine, path: str, kwargs: dict[str, Any]) -> Call:
        body = kwargs.get("body")
        stream = bool(kwargs.get("stream"))
        options = kwargs.get("options") or {}
        headers = options.get("headers") if isinstance(options, Mapping) else None
        raw_mode = headers.get(RAW_RESPONSE_HEADER) if isinstance(headers, Mapping) else None
        return cls(
            api,
            hook,
            engine,
            path,
            kwargs,
            body if isinstance(body, Mapping) else {},
            stream,
            stream or raw_mode == "stream",
        )

    def spec(self) -> NodeSpec:
        """The node, its `llm:step` identity, and the tool roster hinted on an invocation's first step."""
        node_input, key, length = self.api.describe_request(self.body)
        step = self.engine.next_llm_step(key, length)
        tools = node_input.get("tools")
        if tools and step.first_step:
            hosted = self.api.hosted_tools(self.body.get("tools"))
            self.engine.hint([hint_entry(n, n in hosted) for n in tools])
        attrs: dict[str, Any] = {
            "model": self.body.get("model"),
            "hook": self.hook,
            "api": self.api.name,
            "stream": self.stream,
        }
        if tools:
            attrs["tools"] = tools
        return NodeSpec(
            name="step",
            kind="llm",
            input=node_input,
            node_id="llm:step",
            instance_id=step.instance_id,
            attrs=attrs,
            tool_calls_in_output=True,  # the gated tools called next take these call ids
        )

    def convert(self, value: Any) -> Reply:
        """An injected JSON value -> the synthetic reply (raises on a bad shape: the gate holds again)."""
        body = self.api.to_body(value, self.body)
        reply = reply_for(self.api, body, self.stream)
        reply.described = self.api.describe_reply(body)
        return reply

    def recorder(self, ex: NodeExecution) -> StreamRecorder:
        return StreamRecorder(self.api, ex, sse=self.stream, engine=self.engine)

    def tee(self, ex: NodeExecution, result: Any, response: Any, is_async: bool) -> None:
        """Records a stream the app will read: from the SDK's typed items when it is the SDK's own
        `Stream` (cheaper: they are decoded once), else from the bytes (raw response shapes)."""
        if isinstance(result, Stream | AsyncStream):
            typed = TypedRecorder(self.api, ex, self.engine)
            tee_stream(result, typed, is_async)
            if not response.is_stream_consumed:
                tee(response, typed, is_async)  # for the ending: the SDK's close vs the app's
            recorder: StreamRecorder = typed
        else:
            recorder = self.recorder(ex)
            tee(response, recorder, is_async)
        _keep_alive(result, recorder)


def _described_body(call: Call, result: Any, response: Any) -> tuple[Any, Any]:
    """(output, usage) of a non-streamed call: off the SDK's typed result, else from the body bytes it read."""
    if isinstance(result, BaseModel):
        try:
            described = call.api.describe_model(result)
        except Exception:  # a model shape this version does not know: read the bytes instead
            described = None
        if described is not None:
            return described
    data: Any = None
    if response is not None:
        try:
            data = json.loads(response.content)
        except Exception:
            data = None
    if data is None and hasattr(result, "model_dump"):
        data = result.model_dump(mode="json")
    return call.api.describe_reply(data)


def _recorded_reply(response: Any) -> Reply:
    headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _DROP_ON_REPLAY]
    return Reply(response.content, response.status_code, headers)


def _bytes_output(call: Call, ex: NodeExecution, content: bytes) -> tuple[Any, Any]:
    recorder = call.recorder(ex)
    recorder.feed(content)
    if call.stream:
        recorder.feed(b"\n\n")  # flush a last event without its blank line
    return call.api.describe_reply(recorder.body())


def _keep_alive(result: Any, recorder: StreamRecorder) -> None:
    try:
        weakref.finalize(result, abandon, recorder)
    except TypeError:  # an object without weakref support: its stream still ends through close()
        pass


# ---- sync ---------------------------------------------------------------------------------------------


def _replay_sync(original: Callable[..., Any], call: Call, reply: Reply) -> Any:
    token = EXCHANGE.set(Exchange(reply=reply))
    try:
        return original(call.path, **call.kwargs)
    finally:
        EXCHANGE.reset(token)


class _SyncNode:
    """The body, `settle` and `from_injected` of one sync call, for `NodeExecution.run_sync`."""

    __slots__ = ("call", "ex", "exchange", "original")

    def __init__(self, original: Callable[..., Any], call: Call, ex: NodeExecution) -> None:
        self.original = original
        self.call = call
        self.ex = ex
        self.exchange = Exchange()

    def body(self) -> Any:
        self.exchange = exchange = Exchange()  # one per attempt: `settle` reads this attempt's response
        token = EXCHANGE.set(exchange)
        try:
            return self.original(self.call.path, **self.call.kwargs)
        finally:
            EXCHANGE.reset(token)

    def settle(self, result: Any) -> Settled:
        call, ex, response = self.call, self.ex, self.exchange.response
        if call.body_pending and response is not None:
            if not ex.wants_hold("after"):
                call.tee(ex, result, response, is_async=False)
                return Settled(result, finishes_later=True)
            # Hold the after gate on the whole reply: read it now, give the app a replay of it.
            try:
                response.read()
            finally:
                response.close()
            output, usage = _bytes_output(call, ex, response.content)
            return Settled(_replay_sync(self.original, call, _recorded_reply(response)), output, usage)
        output, usage = _described_body(call, result, response)
        observe(call.engine, ex, call.api.output_items(result, response))
        return Settled(result, output, usage)

    def from_injected(self, value: Any) -> Settled:
        reply = self.call.convert(value)
        output, usage = reply.described
        return Settled(_replay_sync(self.original, self.call, reply), output, usage)


def run_sync(original: Callable[..., Any], call: Call) -> Any:
    ex = call.engine.start_node(call.spec())
    node = _SyncNode(original, call, ex)
    return ex.run_sync(node.body, from_injected=node.from_injected, settle=node.settle)


# ---- async ----------------------------------------------------------------------------------------------


async def _replay_async(original: Callable[..., Awaitable[Any]], call: Call, reply: Reply) -> Any:
    token = EXCHANGE.set(Exchange(reply=reply))
    try:
        return await original(call.path, **call.kwargs)
    finally:
        EXCHANGE.reset(token)


class _AsyncNode:
    """The same for `NodeExecution.run_async`."""

    __slots__ = ("call", "ex", "exchange", "original")

    def __init__(self, original: Callable[..., Awaitable[Any]], call: Call, ex: NodeExecution) -> None:
        self.original = original
        self.call = call
        self.ex = ex
        self.exchange = Exchange()

    async def body(self) -> Any:
        self.exchange = exchange = Exchange()
        token = EXCHANGE.set(exchange)
        try:
            return await self.original(self.call.path, **self.call.kwargs)
        finally:
            EXCHANGE.reset(token)

    async def settle(self, result: Any) -> Settled:
        call, ex, response = self.call, self.ex, self.exchange.response
        if call.body_pending and response is not None:
            if not ex.wants_hold("after"):
                call.tee(ex, result, response, is_async=True)
                return Settled(result, finishes_later=True)
            try:
                await response.aread()
            finally:
                await response.aclose()
            output, usage = _bytes_output(call, ex, response.content)
            return Settled(await _replay_async(self.original, call, _recorded_reply(response)), output, usage)
        output, usage = _described_body(call, result, response)
        observe(call.engine, ex, call.api.output_items(result, response))
        return Settled(result, output, usage)

    def from_injected(self, value: Any) -> Awaitable[Settled]:
        """Checks the shape now (a bad one raises: the gate holds again); the engine awaits the replay."""
        return self._replayed(self.call.convert(value))

    async def _replayed(self, reply: Reply) -> Settled:
        output, usage = reply.described
        return Settled(await _replay_async(self.original, self.call, reply), output, usage)


async def run_async(original: Callable[..., Awaitable[Any]], call: Call) -> Any:
    ex = await call.engine.astart_node(call.spec())  # a wait_for_attach wait awaits, never blocks the loop
    node = _AsyncNode(original, call, ex)
    return await ex.run_async(node.body, from_injected=node.from_injected, settle=node.settle)
