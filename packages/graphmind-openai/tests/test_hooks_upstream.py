"""Fails loudly when a private openai hook this adapter relies on moves (read _hooks.py's table)."""

from __future__ import annotations

import inspect

import openai
import pytest
from openai import AsyncOpenAI, OpenAI
from packaging.specifiers import SpecifierSet

from graphmind_openai import SUPPORTED
from graphmind_openai._hooks import COPY_HOOKS, RESOURCE_HOOKS, SEND_HOOK, resolve


def test_the_installed_openai_is_in_the_supported_range() -> None:
    assert openai.__version__ in SpecifierSet(SUPPORTED.removeprefix("openai")), (
        f"openai {openai.__version__} is outside {SUPPORTED}: read _hooks.py against its sources, then widen the range"
    )


@pytest.mark.parametrize("cls", [OpenAI, AsyncOpenAI])
def test_each_resource_keeps_post_on_the_instance(cls: type) -> None:
    # openai/_resource.py SyncAPIResource.__init__: `self._post = client.post`
    client = cls(api_key="k", base_url="http://127.0.0.1:9/v1")
    for hook in RESOURCE_HOOKS:
        resource = resolve(client, hook.resource)
        assert "_post" in vars(resource), (
            f"{hook.resource}._post is no longer set on the instance ({hook.upstream})"
        )
        assert vars(resource)["_post"] == client.post
        assert resolve(client, hook.resource) is resource, f"{hook.resource} is no longer a cached property"


@pytest.mark.parametrize("cls", [OpenAI, AsyncOpenAI])
def test_post_and_send_request_keep_their_signatures(cls: type) -> None:
    post = inspect.signature(cls.post)
    for name in ("path", "cast_to", "body", "options", "stream", "stream_cls"):
        assert name in post.parameters, f"{cls.__name__}.post lost `{name}` (openai/_base_client.py)"
    send = inspect.signature(getattr(cls, SEND_HOOK))
    assert list(send.parameters)[:3] == ["self", "request", "stream"], (
        f"{cls.__name__}.{SEND_HOOK} changed (openai/_base_client.py)"
    )
    source = inspect.getsource(cls.request)
    assert f"self.{SEND_HOOK}(" in source, f"{cls.__name__}.request no longer sends through {SEND_HOOK}"


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
        source = inspect.getsource(Completions)
    else:
        source = inspect.getsource(chat_helpers)
    assert "._post(" in source and ".create" in source


def test_raw_response_header_and_stream_bytes() -> None:
    from openai import _streaming
    from openai._constants import RAW_RESPONSE_HEADER

    from graphmind_openai._request import RAW_RESPONSE_HEADER as OURS

    assert RAW_RESPONSE_HEADER == OURS
    # The tee wraps `response.stream`; Stream reads the bytes through `response.iter_bytes()` and closes the response.
    source = inspect.getsource(_streaming)
    assert "self.response.iter_bytes()" in source and "response.close()" in source
