"""The model side: every request the agent sends is one `llm:step` node, through a `WrapperModel`
the capability puts around the model serving each attempt (`get_wrapper_model`).

Why the wrapper and not `wrap_model_request`: a `wrap_model_request` hook may call its handler
only once (pydantic_ai/_agent_graph.py:2717 raises UserError on a second call), so retry at an
after or error gate could not run the request again; the wrapper's `request` is the model's own
and may be called as often as a gate asks. `get_wrapper_model` is called for every attempt with
the model that serves it (pydantic_ai/_agent_graph.py:3294), FallbackModel and a hook's chosen
model included, and is entered and exited around that attempt.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from pydantic_ai.models import CompletedStreamedResponse, Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

from graphmind.adapter import Engine, NodeExecution, NodeSpec, Settled

from . import _describe, _inject


@dataclass(init=False)
class GatedModel(WrapperModel):
    """`wrapped`, with each `request` / `request_stream` a gated `llm:step` node of `engine()`'s client."""

    def __init__(self, wrapped: Model, engine: Callable[[], Engine]) -> None:
        super().__init__(wrapped)
        self._engine = engine

    def _spec(
        self,
        engine: Engine,
        messages: list[ModelMessage],
        params: ModelRequestParameters,
        body: Callable[[list[ModelMessage]], Any],
    ) -> NodeSpec | None:
        """`body(messages)`: the call with these messages; an edited input becomes other messages
        (`_inject.messages`, the one JSON -> call conversion) for the same body."""

        def edit(value: Any) -> Callable[[], Any]:
            edited = _inject.messages(value, self.wrapped.model_name)
            return lambda: body(edited)

        def build() -> NodeSpec:
            node_input, key, length = _describe.request(self.wrapped.model_name, messages, params)
            step = engine.next_llm_step(key, length)
            return NodeSpec(
                "step",
                "llm",
                node_input,
                node_id="llm:step",
                instance_id=step.instance_id,
                attrs={"model": str(self.wrapped.model_name), "system": str(self.wrapped.system)},
                tool_calls_in_output=True,
                edit=edit,
            )

        return engine.spec_or_none("llm", "step", build)

    def _from_injected(self, value: Any) -> Settled:
        response = _inject.model_response(value, self.wrapped.model_name)
        return Settled(response, _describe.reply(response), None)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        engine = self._engine()

        def body(history: list[ModelMessage]) -> Any:
            return self.wrapped.request(history, model_settings, model_request_parameters)

        spec = self._spec(engine, messages, model_request_parameters, body) if engine.live else None
        if spec is None:
            return await self.wrapped.request(messages, model_settings, model_request_parameters)
        return await engine.aexecute(
            spec,
            lambda: self.wrapped.request(messages, model_settings, model_request_parameters),
            describe_output=_describe.reply,
            describe_usage=_describe.usage,
            from_injected=self._from_injected,
        )

    @contextlib.asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        engine = self._engine()
        stack = contextlib.AsyncExitStack()

        async def open_stream(history: list[ModelMessage] = messages) -> StreamedResponse:
            return await stack.enter_async_context(
                self.wrapped.request_stream(history, model_settings, model_request_parameters, run_context)
            )

        spec = self._spec(engine, messages, model_request_parameters, open_stream) if engine.live else None
        if spec is None:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as plain:
                yield plain
            return
        ex = await engine.astart_node(spec)
        async with stack:

            def from_injected(value: Any) -> Settled:
                response = _inject.model_response(value, self.wrapped.model_name)
                replayed = ChunkedResponse(response, model_request_parameters=model_request_parameters)
                return Settled(replayed, _describe.reply(response), None)

            async def settle(streamed: StreamedResponse) -> Settled:
                # The stream reaches the app live; the node ends with it (`_tee`, or below when the
                # app leaves the stream before its end).
                _tee(streamed, ex)
                return Settled(streamed, finishes_later=True)

            streamed = await ex.run_async(open_stream, None, from_injected, None, settle)
            try:
                yield streamed
            finally:
                if not ex.ended:  # left before the end (or never read): what arrived so far
                    ex.finish(
                        _describe.reply(streamed.get()), usage=_describe.usage(streamed.get()), cut_short=True
                    )


# One request-only wrapper class per request-only model class (a handful in any process).
_REQUEST_ONLY: dict[type[Model], type[GatedModel]] = {}


def gated_model(wrapped: Model, engine: Callable[[], Engine]) -> GatedModel:
    """A `GatedModel` around `wrapped` that streams only if `wrapped` does.

    The framework tells a model that cannot stream by `type(model).request_stream is
    Model.request_stream` and then raises a clear `UserError` naming the model's class
    (pydantic_ai/_agent_graph.py:1073, checked on the model serving the attempt, :3460); a
    wrapper whose class defines `request_stream` would hide that and fail later with the model's
    `NotImplementedError`. So a request-only model gets a wrapper class of its own name (its
    qualname says it is ours) whose `request_stream` is `Model`'s, set after the class is made
    because `Model.__init_subclass__` wraps a `request_stream` found in a class body
    (pydantic_ai/models/__init__.py:1140)."""
    cls = type(wrapped)
    if cls.request_stream is not Model.request_stream:
        return GatedModel(wrapped, engine)
    request_only = _REQUEST_ONLY.get(cls)
    if request_only is None:
        request_only = type(cls.__name__, (GatedModel,), {"__qualname__": f"GatedModel[{cls.__qualname__}]"})
        request_only.request_stream = Model.request_stream  # type: ignore[method-assign]
        _REQUEST_ONLY[cls] = request_only
    return request_only(wrapped, engine)


class ChunkedResponse(CompletedStreamedResponse):
    """An injected (or replayed) reply as a stream: its text in word-sized chunks, as a provider
    streams it, and each tool call whole. `CompletedStreamedResponse` (pydantic_ai/models/__init__.py:3252)
    keeps the reply and `get()`; only its events are finer than its one start event per part."""

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        for index, part in enumerate(self.response.parts):
            if isinstance(part, TextPart):
                for chunk in re.findall(r"\s*\S+\s*|\s+", part.content) or [""]:
                    for event in self._parts_manager.handle_text_delta(vendor_part_id=index, content=chunk):
                        yield event
            else:
                yield self._parts_manager.handle_part(vendor_part_id=index, part=part)

    def get(self) -> ModelResponse:
        # While it is read, what has arrived so far, as a live stream's `get()` (the framework
        # computes text deltas from it); before the first read, the whole reply.
        response = super().get()
        if self._event_iterator is None:
            return response
        return dataclasses.replace(response, parts=self._parts_manager.get_parts())


def _tee(streamed: StreamedResponse, ex: NodeExecution) -> None:
    """Text deltas as `node.token`s while the app reads; the node finishes with the whole reply.

    `StreamedResponse.__aiter__` reads `self._get_event_iterator()` (pydantic_ai/models/__init__.py:2972),
    so an instance attribute of that name puts the tee between the provider's events and the app."""
    events = streamed._get_event_iterator

    async def tee() -> AsyncIterator[ModelResponseStreamEvent]:
        try:
            async for event in events():
                if isinstance(event, PartDeltaEvent):
                    if isinstance(event.delta, TextPartDelta):
                        ex.token(event.delta.content_delta)
                elif (
                    isinstance(event, PartStartEvent)
                    and isinstance(event.part, TextPart)
                    and event.part.content
                ):
                    ex.token(event.part.content)  # a text part starts with its first chunk
                yield event
        except Exception as exc:
            ex.fail(exc)
            raise
        response = streamed.get()
        ex.finish(_describe.reply(response), usage=_describe.usage(response))

    streamed._get_event_iterator = tee  # type: ignore[method-assign]
