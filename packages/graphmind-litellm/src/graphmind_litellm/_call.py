"""One LiteLLM call through the gate engine, as one `llm:step` node.

```
node.started ─► before ─► litellm.<api>(...) (LiteLLM's retries inside) ─► after ─► node.finished
                  │ inject: litellm.<api>(..., mock_response=<the injected reply>): zero HTTP requests
                  └─ error gate on LiteLLM's final exception: retry calls again, inject answers, continue re-raises it
```

The engine (`NodeExecution.run_sync` / `run_async`) drives the gates; this module supplies the body
(the original function), `settle` (a stream is teed and finished when the app has read it; a stream
the after gate will hold is read whole first and handed to the app as LiteLLM's own replay of it)
and `from_injected` (LiteLLM builds its own type from `mock_response`). LiteLLM starts its request
timeout inside the body, so a held before gate never eats into it.

`OWNED` is set for the whole call: a `GraphmindLogger` also in `litellm.callbacks` leaves a call
this module records alone, so one call is one node.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from litellm import ModelResponse, stream_chunk_builder
from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

from graphmind.adapter import (
    AsyncDriver,
    Engine,
    NodeExecution,
    NodeSpec,
    Owned,
    Settled,
    SyncDriver,
    edited_request,
    json_scalar,
)

from ._apis import Api
from ._describe import request_of
from ._inject import edit_message
from ._stream import StreamRecorder, tee

OWNED: contextvars.ContextVar[bool] = contextvars.ContextVar("graphmind_litellm_owned", default=False)


def provider_of(request: Mapping[str, Any]) -> Any:
    """The provider as the request names it (LiteLLM resolves the rest; the node's output has its answer)."""
    provider = request.get("custom_llm_provider")
    if provider:
        return provider
    model = request.get("model")
    if isinstance(model, str) and "/" in model:
        return model.split("/", 1)[0]
    return None


def node_spec(engine: Engine, api: Api, request: Mapping[str, Any], hook: str) -> NodeSpec:
    """The node, its `llm:step` identity (one invocation per agent turn), and the tool roster hint."""
    described = api.describe_request(request)
    node_input, key, length = described
    model, provider = request.get("model"), provider_of(request)
    attrs: dict[str, Any] = {"model": model, "provider": provider, "hook": hook}
    # attrs: the adapter's own strings and the input's `tools` list, besides these two (checked)
    owned = type(described) is Owned and json_scalar(model) and json_scalar(provider)
    if request.get("stream"):
        attrs["stream"] = True
    instance_id = None
    tools = node_input.get("tools")
    if api.steps:
        step = engine.next_llm_step(key, length)
        instance_id = step.instance_id
        if tools and step.first_step:
            engine.hint([{"nodeId": f"tool:{n}", "kind": "tool", "name": n} for n in tools])
    if tools:
        attrs["tools"] = tools
    return NodeSpec(
        name=api.node_name,
        kind="llm",
        input=node_input,
        node_id=f"llm:{api.node_name}",
        instance_id=instance_id,
        attrs=attrs,
        tool_calls_in_output=api.steps,  # a model step: the gated tools called next take its call ids
        owned=owned,
    )


class Call:
    """What the sync and async drivers share: the call, its request, and how results are described
    (the drivers are graphmind.adapter's `SyncDriver` / `AsyncDriver`, as the Stainless layer's)."""

    __slots__ = ("api", "args", "kwargs", "request")

    def __init__(
        self, api: Api, args: tuple[Any, ...], kwargs: dict[str, Any], request: dict[str, Any]
    ) -> None:
        self.api = api
        self.args = args
        self.kwargs = kwargs
        self.request = request

    def edited(self, value: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call's (args, kwargs) for an edited input (the one JSON -> LiteLLM call conversion:
        the request by argument name, core's `edited_request`); raises with the reason."""
        if len(self.args) > len(self.api.positional):
            raise ValueError("a call with extra positional arguments cannot be rebuilt from JSON")
        request = edited_request(value, self.request, self.api.describe_request, edit_message=edit_message)
        return (), request

    def use(self, edited: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        self.args, self.kwargs = edited
        self.request = self.kwargs

    def teed(self, result: Any) -> bool:
        return self.api.tees_streams and isinstance(result, CustomStreamWrapper)

    def mocked(self, value: Any) -> tuple[dict[str, Any], Any]:
        """(the kwargs that make LiteLLM answer `value` itself, the `mock_response` value); raises on a bad shape."""
        mock = self.api.to_mock(value, self.request.get("model"))
        kwargs = dict(self.kwargs)
        kwargs["mock_response"] = mock
        return kwargs, mock

    def described(self, mock: Any, result: Any) -> tuple[Any, Any]:
        if isinstance(mock, ModelResponse):
            return self.api.describe_result(mock)
        if self.request.get("stream"):
            return {"role": "assistant", "content": mock}, None
        return self.api.describe_result(result)

    def buffered(self, chunks: list[Any], recorder: StreamRecorder) -> tuple[dict[str, Any], Any, Any]:
        """A stream read whole for the after gate: the kwargs of its replay, its output and usage."""
        built = stream_chunk_builder(chunks, messages=self.request.get("messages"))
        output, usage = recorder.output()
        kwargs = dict(self.kwargs)
        kwargs["mock_response"] = built
        return kwargs, output, usage

    def plain(self, result: Any) -> Settled:
        if self.request.get("stream"):  # a stream this API does not tee: the node ends as it is handed over
            return Settled(result, {"stream": type(result).__name__}, None)
        described = self.api.describe_result(result)
        return Settled(result, described[0], described[1], owned=type(described) is Owned)


class _SyncNode(SyncDriver):
    __slots__ = ("call",)

    def __init__(self, original: Callable[..., Any], ex: NodeExecution, call: Call) -> None:
        self.original = original
        self.ex = ex
        self.call = call

    def body(self) -> Any:
        call = self.call
        return self.original(*call.args, **call.kwargs)

    def edited(self, value: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return self.call.edited(value)

    def use(self, edited: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        self.call.use(edited)

    def settle(self, result: Any) -> Settled:
        call = self.call
        if not call.teed(result):
            return call.plain(result)
        if not self.ex.wants_hold("after"):
            return Settled(tee(result, self.ex), finishes_later=True)
        recorder = StreamRecorder(self.ex)  # tokens still reach the hub while the stream is read whole
        chunks = []
        for chunk in result:
            recorder.feed(chunk)
            chunks.append(chunk)
        kwargs, output, usage = call.buffered(chunks, recorder)
        return Settled(self.original(*call.args, **kwargs), output, usage)

    def from_injected(self, value: Any) -> Settled:
        call = self.call
        kwargs, mock = call.mocked(value)
        result = self.original(*call.args, **kwargs)
        output, usage = call.described(mock, result)
        return Settled(result, output, usage)


class _AsyncNode(AsyncDriver):
    __slots__ = ("call",)

    def __init__(self, original: Callable[..., Awaitable[Any]], ex: NodeExecution, call: Call) -> None:
        self.original = original
        self.ex = ex
        self.call = call

    async def body(self) -> Any:
        call = self.call
        return await self.original(*call.args, **call.kwargs)

    def edited(self, value: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return self.call.edited(value)

    def use(self, edited: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        self.call.use(edited)

    async def settle(self, result: Any) -> Settled:
        call = self.call
        if not call.teed(result):
            return call.plain(result)
        if not self.ex.wants_hold("after"):
            return Settled(tee(result, self.ex), finishes_later=True)
        recorder = StreamRecorder(self.ex)
        chunks = []
        async for chunk in result:
            recorder.feed(chunk)
            chunks.append(chunk)
        kwargs, output, usage = call.buffered(chunks, recorder)
        return Settled(await self.original(*call.args, **kwargs), output, usage)

    def from_injected(self, value: Any) -> Awaitable[Settled]:
        """Checks the shape now (a bad one raises: the gate holds again); the engine awaits the answer."""
        kwargs, mock = self.call.mocked(value)
        return self._answered(kwargs, mock)

    async def _answered(self, kwargs: dict[str, Any], mock: Any) -> Settled:
        call = self.call
        result = await self.original(*call.args, **kwargs)
        output, usage = call.described(mock, result)
        return Settled(result, output, usage)


def run_sync(
    original: Callable[..., Any],
    api: Api,
    engine: Engine,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    request = request_of(api.positional, args, kwargs)
    token = OWNED.set(True)
    try:
        spec = engine.spec_or_none("llm", api.node_name, node_spec, engine, api, request, api.attr)
        if spec is None:
            return original(*args, **kwargs)
        ex = engine.start_node(spec)
        return _SyncNode(original, ex, Call(api, args, kwargs, request)).run()
    finally:
        OWNED.reset(token)


async def run_async(
    original: Callable[..., Awaitable[Any]],
    api: Api,
    engine: Engine,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    request = request_of(api.positional, args, kwargs)
    token = OWNED.set(True)
    try:
        spec = engine.spec_or_none("llm", api.node_name, node_spec, engine, api, request, api.attr)
        if spec is None:
            return await original(*args, **kwargs)
        ex = await engine.astart_node(spec)
        return await _AsyncNode(original, ex, Call(api, args, kwargs, request)).run()
    finally:
        OWNED.reset(token)
