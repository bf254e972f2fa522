"""What one `resource._post(path, ...)` call is, decided once before any gate: its node, how an
injected value becomes a reply, how its stream is recorded, how its reply is described."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import NodeSpec, Owned, json_scalar
from .._edit import reply_schema
from ._api import Api, Described
from ._exchange import Reply, Sdk, reply_for
from ._recorder import StreamRecorder, TypedRecorder, keep_alive, tee_stream
from ._tee import tee

if TYPE_CHECKING:
    from .. import Engine, NodeExecution

# `_constants.py` in both SDKs: "true" / "raw" (with_raw_response) or "stream" (with_streaming_response)
RAW_RESPONSE_HEADER = "X-Stainless-Raw-Response"


@dataclass(slots=True)
class Call:
    sdk: Sdk
    api: Api
    hook: str
    engine: Engine
    path: str
    kwargs: dict[str, Any]
    body: Mapping[str, Any] = field(default_factory=dict)
    stream: bool = False
    body_pending: bool = False  # the SDK has not read the body when `_post` returns

    @classmethod
    def of(cls, sdk: Sdk, api: Api, hook: str, engine: Engine, path: str, kwargs: dict[str, Any]) -> Call:
        body = kwargs.get("body")
        stream = bool(kwargs.get("stream"))
        options = kwargs.get("options") or {}
        # `type(x) is dict` first: the SDK passes plain dicts, and an ABC isinstance check is slow
        headers = options.get("headers") if type(options) is dict or isinstance(options, Mapping) else None
        raw_mode = (
            headers.get(RAW_RESPONSE_HEADER)
            if headers is not None and (type(headers) is dict or isinstance(headers, Mapping))
            else None
        )
        if not (type(body) is dict or isinstance(body, Mapping)):
            body = {}
        return cls(sdk, api, hook, engine, path, kwargs, body, stream, stream or raw_mode == "stream")

    def spec(self) -> NodeSpec:
        """The node, its `llm:step` identity, and the tool roster hinted on an invocation's first step."""
        api = self.api
        described = api.describe_request(self.body)
        node_input, key, length = described
        model = self.body.get("model")
        attrs: dict[str, Any] = {"model": model, "hook": self.hook, "api": api.name, "stream": self.stream}
        # attrs are built here of the adapter's own strings, a bool and the model (checked)
        owned = type(described) is Owned and json_scalar(model)
        if not api.gated:
            return NodeSpec(name=api.node, kind="llm", input=node_input, attrs=attrs, owned=owned)
        step = self.engine.next_llm_step(key, length)
        tools = node_input.get("tools")
        definitions = self.body.get("tools")
        if tools:
            attrs["tools"] = tools
            if step.first_step:
                self.engine.hint(api.hints(self.body, tools))
        return NodeSpec(
            name=api.node,
            kind="llm",
            input=node_input,
            node_id="llm:step",
            instance_id=step.instance_id,
            attrs=attrs,
            tool_calls_in_output=True,  # the gated tools called next take these call ids
            owned=owned,  # `tools` is the input's own list: owned with it
            # the inject box's skeleton, built only if a gate holds: a reply calling the first tool
            output_schema=(lambda: reply_schema(definitions)) if tools else None,
        )

    def edited(self, value: Any) -> dict[str, Any]:
        """The `_post` keyword arguments for an edited input (raises with the reason: held again)."""
        from .._edit import edited_request

        api = self.api
        body = edited_request(
            value,
            self.body,
            api.describe_request,
            messages_field=api.messages_field,
            edit_message=api.edit_message,
        )
        return {**self.kwargs, "body": body}

    def use(self, kwargs: dict[str, Any]) -> None:
        """From now on the call is the edited one (its attempts, replays and injects)."""
        self.kwargs = kwargs
        self.body = kwargs["body"]

    def convert(self, value: Any, usage: Mapping[str, Any] | None = None) -> Reply:
        """An injected JSON value -> the synthetic reply (raises on a bad shape: the gate holds again).
        `usage`: a replayed step's recorded usage, put into the reply the app reads (the node itself
        records the replayed step as before: no tokens spent)."""
        api = self.api
        body = api.to_body(value, self.body)
        described = api.describe_body(body)
        if usage and api.usage_body is not None:
            body["usage"] = api.usage_body(usage)
        reply = reply_for(api, body, self.stream)
        reply.described = described
        return reply

    def tee(self, ex: NodeExecution, result: Any, response: Any, is_async: bool) -> None:
        """Records a stream the app will read: from the SDK's typed items when it is the SDK's own
        `Stream` (cheaper: they are decoded once), else from the bytes (raw response shapes)."""
        recorder: StreamRecorder
        if isinstance(result, self.sdk.stream_types):
            typed = TypedRecorder(self.sdk, self.api, ex, self.engine)
            tee_stream(result, typed, is_async)
            if not response.is_stream_consumed:
                tee(response, typed, is_async)  # for the ending: the SDK's close vs the app's
            recorder = typed
        else:
            recorder = StreamRecorder(self.sdk, self.api, ex, self.stream, self.engine)
            tee(response, recorder, is_async)
        keep_alive(result, recorder)

    def described(self, result: Any, response: Any) -> Described:
        """(output, usage) of a call whose body was read: off the SDK's typed result, else from the body bytes."""
        if isinstance(result, self.sdk.model_type):
            try:
                found = self.api.describe_result(result)
            except Exception:  # a model shape this version does not know: read the bytes instead
                found = None
            if found is not None:
                return found
        data: Any = None
        if response is not None:
            try:
                data = json.loads(response.content)
            except Exception:
                data = None
        if data is None and hasattr(result, "model_dump"):
            data = result.model_dump(mode="json")
        return self.api.describe_body(data)

    def bytes_output(self, ex: NodeExecution, content: bytes) -> Described:
        """(output, usage) of a streamed body read whole (its after gate holds)."""
        recorder = StreamRecorder(self.sdk, self.api, ex, self.stream, self.engine)
        recorder.feed(content)
        if self.stream:
            recorder.feed(b"\n\n")  # flush a last event without its blank line
        return self.api.describe_body(recorder.body())
