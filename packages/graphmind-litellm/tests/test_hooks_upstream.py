"""Fails loudly when a LiteLLM hook this adapter relies on moves (docs/litellm.md has the table)."""

from __future__ import annotations

import importlib.metadata
import inspect

import litellm
import pytest
from litellm.integrations.custom_logger import CustomLogger
from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

from graphmind.adapter import Hook
from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported
from graphmind_litellm import SUPPORTED
from graphmind_litellm._apis import APIS
from graphmind_litellm._hooks import HOOKS


def test_the_installed_litellm_is_in_the_supported_range() -> None:
    version = importlib.metadata.version("litellm")
    assert version != "1.107.0", "litellm 1.107.0 was reported compromised: never install it"
    assert assert_supported(SUPPORTED) == version
    assert all(isinstance(row, Hook) for row in HOOKS)  # the one hook-row type
    assert_hooks_stand(HOOKS, litellm)


@pytest.mark.parametrize("api", APIS, ids=[a.attr for a in APIS])
def test_every_gated_function_is_a_public_litellm_attribute(api: object) -> None:
    fn = getattr(litellm, api.attr, None)  # type: ignore[attr-defined]
    assert callable(fn), f"litellm.{api.attr} is gone (_apis.py's row)"  # type: ignore[attr-defined]
    assert inspect.iscoroutinefunction(fn) is api.is_async, (
        f"litellm.{api.attr} changed between sync and async"
    )  # type: ignore[attr-defined]


def test_the_stream_wrapper_has_the_methods_the_tee_overrides() -> None:
    for name in ("__next__", "__anext__", "close", "aclose"):
        assert name in vars(CustomStreamWrapper), f"CustomStreamWrapper.{name} moved (streaming_handler.py)"
    assert "__slots__" not in vars(CustomStreamWrapper), (
        "CustomStreamWrapper got __slots__: the class swap in _stream.py needs a __dict__"
    )
    assert_in_source(
        CustomStreamWrapper.__next__, "self.close()"
    )  # LiteLLM closes a sync stream itself at its end


def test_the_logger_hooks_still_exist_with_their_signatures() -> None:
    expected = {
        "log_pre_api_call": ["self", "model", "messages", "kwargs"],
        "async_pre_call_deployment_hook": ["self", "kwargs", "call_type"],
        "async_post_call_success_deployment_hook": ["self", "request_data", "response", "call_type"],
        "log_success_event": ["self", "kwargs", "response_obj", "start_time", "end_time"],
        "async_log_success_event": ["self", "kwargs", "response_obj", "start_time", "end_time"],
        "log_failure_event": ["self", "kwargs", "response_obj", "start_time", "end_time"],
        "async_log_failure_event": ["self", "kwargs", "response_obj", "start_time", "end_time"],
    }
    for name, params in expected.items():
        assert list(inspect.signature(getattr(CustomLogger, name)).parameters) == params, (
            f"CustomLogger.{name} changed"
        )


def test_the_async_path_awaits_the_deployment_hooks() -> None:
    from litellm import utils

    # litellm/utils.py client() awaits the pre-call and the success deployment hooks
    assert_in_source(
        utils.client,
        "await async_pre_call_deployment_hook(kwargs, call_type)",
        "await async_post_call_success_deployment_hook(",
    )


def test_mock_response_takes_a_model_response_as_is_and_streams_it() -> None:
    from litellm import ModelResponse

    reply = ModelResponse(
        choices=[{"index": 0, "message": {"role": "assistant", "content": "as is"}, "finish_reason": "stop"}]
    )
    assert (
        litellm.completion(
            model="openai/gpt-4o-mini", messages=[{"role": "user", "content": "x"}], mock_response=reply
        )
        is reply
    )
    stream = litellm.completion(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": "x"}],
        mock_response=reply,
        stream=True,
    )
    assert type(stream) is CustomStreamWrapper
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "as is"
