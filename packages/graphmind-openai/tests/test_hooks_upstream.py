"""Fails loudly when a private openai hook this adapter relies on moves (read _hooks.py's table)."""

from __future__ import annotations

import inspect

import pytest
from openai import AsyncOpenAI, OpenAI

from graphmind.adapter import Hook
from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported
from graphmind_openai import SUPPORTED
from graphmind_openai._hooks import COPY_HOOKS, HOOKS, RESOURCE_HOOKS, SEND, SEND_HOOK, resolve


def test_the_installed_openai_is_in_the_supported_range() -> None:
    assert_supported(SUPPORTED)
    assert all(isinstance(row, Hook) for row in HOOKS)  # the one hook-row type


@pytest.mark.parametrize("cls", [OpenAI, AsyncOpenAI])
def test_every_row_is_in_its_range_and_its_attribute_is_where_it_says(cls: type) -> None:
    assert_hooks_stand(HOOKS, cls(api_key="k", base_url="http://127.0.0.1:9/v1"))


@pytest.mark.parametrize("cls", [OpenAI, AsyncOpenAI])
def test_each_resource_keeps_post_on_the_instance(cls: type) -> None:
    # openai/_resource.py SyncAPIResource.__init__: `self._post = client.post`
    client = cls(api_key="k", base_url="http://127.0.0.1:9/v1")
    for hook in RESOURCE_HOOKS:
        resource = resolve(client, hook.target)
        assert "_post" in vars(resource), (
            f"{hook.target}._post is no longer set on the instance ({hook.upstream})"
        )
        assert vars(resource)["_post"] == client.post
        assert resolve(client, hook.target) is resource, f"{hook.target} is no longer a cached property"


@pytest.mark.parametrize("cls", [OpenAI, AsyncOpenAI])
def test_post_and_send_request_keep_their_signatures(cls: type) -> None:
    post = inspect.signature(cls.post)
    for name in ("path", "cast_to", "body", "options", "stream", "stream_cls"):
        assert name in post.parameters, f"{cls.__name__}.post lost `{name}` (openai/_base_client.py)"
    send = inspect.signature(getattr(cls, SEND_HOOK))
    assert list(send.parameters)[:3] == ["self", "request", "stream"], (
        f"{cls.__name__}.{SEND_HOOK} changed (openai/_base_client.py)"
    )
    assert_in_source(cls.request, f"self.{SEND_HOOK}(", hook=SEND)


def test_with_options_is_copy() -> None:
    for name in COPY_HOOKS:
        assert callable(getattr(OpenAI, name)), f"OpenAI.{name} is gone (openai/_client.py)"
    assert OpenAI.with_options is OpenAI.copy


def test_helpers_post_through_the_resource() -> None:
    # parse() must call `resource._post`, stream() must call `resource.create`: the hook sees both.
    from openai.resources.chat.completions import Completions
    from openai.resources.responses import Responses

    for cls in (Completions, Responses):
        for name in ("parse", "stream"):
            assert hasattr(cls, name), f"{cls.__name__}.{name} is gone"
    try:
        from openai.lib import _chat_completion_resources as chat_helpers
    except ImportError:  # openai 2.x keeps the helpers in the resource module
        assert_in_source(Completions, "._post(", ".create", hook=RESOURCE_HOOKS[0])
    else:
        assert_in_source(chat_helpers, "._post(", ".create", hook=RESOURCE_HOOKS[0])


def test_raw_response_header_and_stream_bytes() -> None:
    from openai import _streaming
    from openai._constants import RAW_RESPONSE_HEADER

    from graphmind_openai._request import RAW_RESPONSE_HEADER as OURS

    assert RAW_RESPONSE_HEADER == OURS
    # The tee wraps `response.stream`; Stream reads the bytes through `response.iter_bytes()` and closes the response.
    assert_in_source(_streaming, "self.response.iter_bytes()", "response.close()")
