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
buffered for its after gate, goes through the SDK's own `_post` once more with the exchange's `reply`
set: the send hook then answers with a synthetic HTTP response instead of sending, and the SDK builds
the very type it would have built. The request's HTTP timeout starts inside `_post`, so it never runs
while the before gate holds. An API that is not `gated` runs as an observed node (no gate holds it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .. import AsyncDriver, Owned, Settled, SyncDriver
from ._call import Call
from ._exchange import Exchange, Reply, recorded_reply

if TYPE_CHECKING:
    from .. import NodeExecution


# Read only by `settle`, which runs after a `body`: never handed to the send hook, never changed.
_NO_ATTEMPT = Exchange()


def _replay_sync(original: Callable[..., Any], call: Call, reply: Reply) -> Any:
    var = call.sdk.exchange
    token = var.set(Exchange(reply=reply))
    try:
        return original(call.path, **call.kwargs)
    finally:
        var.reset(token)


def _describe_read(call: Call, ex: NodeExecution, result: Any, response: Any) -> Settled:
    """The node's output and usage of a reply that was read (and whether the describer owns them),
    and its provider-executed tools. GraphMind's own bookkeeping: a failure here is warned about and
    never becomes the call's error."""
    try:
        described = call.described(result, response)
        if call.api.observe is not None:
            call.api.observe(call.engine, ex, result, response)
    except Exception as exc:
        call.engine.warn(
            f"[graphmind] could not describe a reply of {ex.node_id}: {exc!r}", key="describe-reply"
        )
        return Settled(result)
    return Settled(result, described[0], described[1], owned=type(described) is Owned)


class _SyncNode(SyncDriver):
    """The body, `settle`, edit and `from_injected` of one sync call (graphmind.adapter's driver)."""

    __slots__ = ("call", "exchange")

    def __init__(self, original: Callable[..., Any], call: Call, ex: NodeExecution) -> None:
        self.original = original
        self.call = call
        self.ex = ex
        self.exchange = _NO_ATTEMPT  # `body` sets this attempt's own

    def body(self) -> Any:
        self.exchange = exchange = Exchange()  # one per attempt: `settle` reads this attempt's response
        var = self.call.sdk.exchange
        token = var.set(exchange)
        try:
            return self.original(self.call.path, **self.call.kwargs)
        finally:
            var.reset(token)

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
            output, usage = call.bytes_output(ex, response.content)
            return Settled(_replay_sync(self.original, call, recorded_reply(response)), output, usage)
        return _describe_read(call, ex, result, response)

    def edited(self, value: Any) -> dict[str, Any]:
        """An edited request: the same `_post`, the edited body."""
        return self.call.edited(value)

    def use(self, edited: dict[str, Any]) -> None:
        self.call.use(edited)

    def from_injected(self, value: Any) -> Settled:
        reply = self.call.convert(value, self.ex.replay_usage if self.ex.replayed else None)
        output, usage = reply.described
        return Settled(_replay_sync(self.original, self.call, reply), output, usage)


def run_sync(original: Callable[..., Any], call: Call) -> Any:
    spec = call.engine.spec_or_none("llm", call.api.node, call.spec)
    if spec is None:
        return original(call.path, **call.kwargs)
    ex = call.engine.start_node(spec)
    if not call.api.gated:
        return _observe_sync(original, call, ex)
    return _SyncNode(original, call, ex).run()


def _observe_sync(original: Callable[..., Any], call: Call, ex: NodeExecution) -> Any:
    """An observed-only call: the node records it, no gate can hold it."""
    exchange = Exchange()
    var = call.sdk.exchange
    token = var.set(exchange)
    try:
        result = original(call.path, **call.kwargs)
    except BaseException as exc:
        ex.fail(exc)
        raise
    finally:
        var.reset(token)
    described = call.described(result, exchange.response)
    if type(described) is Owned:
        ex.finish(described[0], usage=described[1], owned=True)
    else:
        ex.finish(described[0], usage=described[1])
    return result


# ---- async ----------------------------------------------------------------------------------------------


async def _replay_async(original: Callable[..., Awaitable[Any]], call: Call, reply: Reply) -> Any:
    var = call.sdk.exchange
    token = var.set(Exchange(reply=reply))
    try:
        return await original(call.path, **call.kwargs)
    finally:
        var.reset(token)


class _AsyncNode(AsyncDriver):
    """The same for `NodeExecution.run_async`."""

    __slots__ = ("call", "exchange")

    def __init__(self, original: Callable[..., Awaitable[Any]], call: Call, ex: NodeExecution) -> None:
        self.original = original
        self.call = call
        self.ex = ex
        self.exchange = _NO_ATTEMPT  # `body` sets this attempt's own

    async def body(self) -> Any:
        self.exchange = exchange = Exchange()
        var = self.call.sdk.exchange
        token = var.set(exchange)
        try:
            return await self.original(self.call.path, **self.call.kwargs)
        finally:
            var.reset(token)

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
            output, usage = call.bytes_output(ex, response.content)
            return Settled(await _replay_async(self.original, call, recorded_reply(response)), output, usage)
        return _describe_read(call, ex, result, response)

    def edited(self, value: Any) -> dict[str, Any]:
        return self.call.edited(value)

    def use(self, edited: dict[str, Any]) -> None:
        self.call.use(edited)

    def from_injected(self, value: Any) -> Awaitable[Settled]:
        """Checks the shape now (a bad one raises: the gate holds again); the engine awaits the replay."""
        return self._replayed(self.call.convert(value, self.ex.replay_usage if self.ex.replayed else None))

    async def _replayed(self, reply: Reply) -> Settled:
        output, usage = reply.described
        return Settled(await _replay_async(self.original, self.call, reply), output, usage)


async def run_async(original: Callable[..., Awaitable[Any]], call: Call) -> Any:
    spec = call.engine.spec_or_none("llm", call.api.node, call.spec)
    if spec is None:
        return await original(call.path, **call.kwargs)
    ex = await call.engine.astart_node(spec)  # a wait_for_attach wait awaits, never blocks the loop
    if not call.api.gated:
        return await _observe_async(original, call, ex)
    return await _AsyncNode(original, call, ex).run()


async def _observe_async(original: Callable[..., Awaitable[Any]], call: Call, ex: NodeExecution) -> Any:
    exchange = Exchange()
    var = call.sdk.exchange
    token = var.set(exchange)
    try:
        result = await original(call.path, **call.kwargs)
    except BaseException as exc:
        ex.fail(exc)
        raise
    finally:
        var.reset(token)
    described = call.described(result, exchange.response)
    if type(described) is Owned:
        ex.finish(described[0], usage=described[1], owned=True)
    else:
        ex.finish(described[0], usage=described[1])
    return result
