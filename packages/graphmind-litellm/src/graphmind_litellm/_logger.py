"""`GraphmindLogger`: a LiteLLM `CustomLogger` that makes every call an `llm:step` node.

    litellm.callbacks = [GraphmindLogger()]

What a callback can do, by path (litellm 1.110.2; docs/litellm.md has the table):

- sync `completion`: `log_pre_api_call` runs inline before the HTTP request
  (litellm/litellm_core_utils/litellm_logging.py:1790), so the before gate holds there; LiteLLM
  swallows what it raises, so abort stops the run at its next node, not this call, and inject is
  not offered (`instrument_litellm()` gives both).
- async: `async_pre_call_deployment_hook` is awaited before the call (litellm/utils.py:2409, called
  at :1837 with no try): the before gate holds without blocking the loop, abort raises out of the
  call with no HTTP request, inject returns the kwargs with `mock_response` (LiteLLM answers it
  itself, streams included). `async_post_call_success_deployment_hook` (:2577) holds the after gate
  on a non-streamed reply, and inject replaces it.
- streams: no callback sees each chunk (`async_post_call_streaming_deployment_hook` runs on the final
  chunk only, streaming_handler.py:2588-2591; the sync `log_stream_event` is not called per chunk), so
  the node gets the whole reply at the end; `instrument_litellm()` sends tokens as they arrive.
- success / failure events (background threads or tasks) finish the node: reply, usage, LiteLLM's
  `response_cost`, or the error with LiteLLM's exception type. Nothing a callback does can retry.

A call `instrument_litellm()` already records (`OWNED`) is left alone: with both, one call is one node.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from litellm import ModelResponse
from litellm.integrations.custom_logger import CustomLogger

import graphmind
from graphmind.adapter import NodeExecution, RunAborted, engine_for

from ._apis import BY_NAME, Api
from ._call import OWNED, node_spec
from ._describe import usage_of
from ._inject import model_response

_SYNC_ACTIONS = ("continue", "abort")
_MAX_OPEN = 4096  # calls started and not yet ended that the logger keeps track of
_ASYNC_ACTIONS = ("continue", "inject", "abort")


def _call_type(value: Any) -> str:
    return str(getattr(value, "value", value) or "completion")


class _Logged:
    __slots__ = ("api", "ex")

    def __init__(self, ex: NodeExecution, api: Api) -> None:
        self.ex = ex
        self.api = api


class GraphmindLogger(CustomLogger):
    """Every LiteLLM call an `llm:step` node: `litellm.callbacks = [GraphmindLogger()]`.

    `session`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    """

    def __init__(self, session: graphmind.Client | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = session
        self._calls: dict[str, _Logged] = {}
        self._lock = threading.Lock()

    # ---- the node of one call ----------------------------------------------------------------
    def _start(
        self, request: Mapping[str, Any], call_id: Any, call_type: str, actions: tuple[str, ...]
    ) -> _Logged | None:
        if OWNED.get() or not isinstance(call_id, str):
            return None
        engine = engine_for(self.session)
        if not engine.live:
            return None
        api = BY_NAME.get(call_type)  # LiteLLM's call type names the function called
        if api is None:
            return None
        with self._lock:
            if call_id in self._calls:
                return None  # the async pre-call hook started it; the sync pre-call log follows
        spec = node_spec(engine, api, request, type(self).__name__)
        # Success events finish the node on a background thread or task, after the app may have
        # called its tools: a late report could hand a later tool a stale id, so the logger path
        # reports none (instrument_litellm() does; docs/protocol.md, "Tool node identity").
        spec.tool_calls_in_output = False
        spec.actions = actions
        logged = _Logged(engine.start_node(spec), api)
        with self._lock:
            self._calls[call_id] = logged
            if len(self._calls) > _MAX_OPEN:  # a call LiteLLM never reported the end of (a stream never read)
                stale = self._calls.pop(next(iter(self._calls)))
                stale.ex.finish(None, cut_short=True)
        return logged

    def _take(self, kwargs: Mapping[str, Any]) -> _Logged | None:
        with self._lock:
            return self._calls.pop(kwargs.get("litellm_call_id"), None)  # type: ignore[arg-type]

    def _peek(self, kwargs: Mapping[str, Any]) -> _Logged | None:
        return self._calls.get(kwargs.get("litellm_call_id"))  # type: ignore[arg-type]

    # ---- before the call -----------------------------------------------------------------------
    def log_pre_api_call(self, model: Any, messages: Any, kwargs: Any) -> None:
        params = kwargs.get("optional_params") or {}
        request = {
            "model": kwargs.get("model") or model,
            "messages": messages,
            "tools": params.get("tools"),
            "stream": kwargs.get("stream"),
            "custom_llm_provider": kwargs.get(
                "custom_llm_provider"
            ),  # (LiteLLM has split it off `model` here)
        }
        logged = self._start(
            request, kwargs.get("litellm_call_id"), _call_type(kwargs.get("call_type")), _SYNC_ACTIONS
        )
        if logged is None:
            return
        try:
            logged.ex.before()
        except RunAborted:
            pass  # LiteLLM swallows a callback's exception: the run is aborted, its next node stops

    async def async_pre_call_deployment_hook(
        self, kwargs: dict[str, Any], call_type: Any
    ) -> dict[str, Any] | None:
        logged = self._start(kwargs, kwargs.get("litellm_call_id"), _call_type(call_type), _ASYNC_ACTIONS)
        if logged is None:
            return None
        model, to_mock = kwargs.get("model"), logged.api.to_mock
        try:
            answer = await logged.ex.abefore(lambda v: to_mock(v, model))
        except RunAborted:
            self._take(kwargs)  # the call ends here: no success or failure event will come for it
            raise
        if not answer.injects:
            return None
        mock = answer.value
        described = (
            logged.api.describe_result(mock) if isinstance(mock, ModelResponse) else ({"content": mock}, None)
        )
        # Finished now, but kept until LiteLLM's own success event: the mocked call's pre-call log
        # must find this call and not start a second node.
        logged.ex.finish(described[0], usage=described[1])
        return {**kwargs, "mock_response": answer.value}

    # ---- after the call (async paths) ----------------------------------------------------------
    async def async_post_call_success_deployment_hook(
        self, request_data: dict[str, Any], response: Any, call_type: Any
    ) -> Any:
        logged = self._peek(request_data)
        if logged is None or not isinstance(response, ModelResponse):  # a chat reply, not a stream
            return None
        output, usage = logged.api.describe_result(response)
        model = request_data.get("model")
        answer = await logged.ex.aafter(output, lambda v: model_response(v, model))
        if not answer.injects:
            return None
        output, usage = logged.api.describe_result(answer.value)
        logged.ex.finish(output, usage=usage)
        return answer.value

    # ---- endings -------------------------------------------------------------------------------
    def _finish(self, kwargs: Mapping[str, Any], response: Any) -> None:
        logged = self._take(kwargs)
        if logged is None or logged.ex.ended:
            return
        response = (
            kwargs.get("complete_streaming_response")
            or kwargs.get("async_complete_streaming_response")
            or response
        )
        output, usage = logged.api.describe_result(response)
        cost = kwargs.get("response_cost")
        if cost is not None:
            usage = {**(usage or {}), **(usage_of(None, cost) or {})}
        logged.ex.finish(output, usage=usage)

    def _fail(self, kwargs: Mapping[str, Any], response: Any) -> None:
        logged = self._take(kwargs)
        if logged is None or logged.ex.ended:
            return
        exc = kwargs.get("exception")
        logged.ex.fail(exc if isinstance(exc, BaseException) else RuntimeError(str(response)))

    def log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        self._finish(kwargs, response_obj)

    async def async_log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._finish(kwargs, response_obj)

    def log_failure_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        self._fail(kwargs, response_obj)

    async def async_log_failure_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._fail(kwargs, response_obj)
