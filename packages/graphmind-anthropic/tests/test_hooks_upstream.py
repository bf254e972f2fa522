"""Fails loudly when a private anthropic hook this adapter relies on moves (read _hooks.py's table)."""

from __future__ import annotations

import inspect

import pytest
from anthropic import Anthropic, AsyncAnthropic

from graphmind.adapter import Hook
from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported
from graphmind_anthropic import SUPPORTED
from graphmind_anthropic._hooks import (
    COPY_HOOKS,
    HOOKS,
    HTTP_CLIENT,
    RESOURCE_HOOKS,
    RUNNER_HOOK,
    SEND,
    SEND_HOOK,
    resolve,
)
from graphmind_anthropic._tools import RUN_TOOL


def test_the_installed_anthropic_is_in_the_supported_range() -> None:
    assert_supported(SUPPORTED)
    assert all(isinstance(row, Hook) for row in HOOKS)  # the one hook-row type


@pytest.mark.parametrize("cls", [Anthropic, AsyncAnthropic])
def test_every_row_is_in_its_range_and_its_attribute_is_where_it_says(cls: type) -> None:
    assert_hooks_stand(HOOKS, cls(api_key="k", base_url="http://127.0.0.1:9"))


@pytest.mark.parametrize("cls", [Anthropic, AsyncAnthropic])
def test_each_resource_keeps_post_on_the_instance(cls: type) -> None:
    # anthropic/_resource.py SyncAPIResource.__init__: `self._post = client.post`
    client = cls(api_key="k", base_url="http://127.0.0.1:9")
    for hook in RESOURCE_HOOKS:
        resource = resolve(client, hook.target)
        assert "_post" in vars(resource), (
            f"{hook.target}._post is no longer set on the instance ({hook.upstream})"
        )
        assert vars(resource)["_post"] == client.post
        assert resolve(client, hook.target) is resource, f"{hook.target} is no longer a cached property"
        source = inspect.getsource(type(resource))
        apis = hook.wrap.apis  # type: ignore[attr-defined]  # a resource_hook row's PostHook
        posted = {api.name for path, api in apis.items() if f'"{path}"' in source}
        missing = {api.name for api in apis.values()} - posted
        assert not missing, f"{type(resource).__name__} posts none of the paths _hooks.py knows for {missing}"


@pytest.mark.parametrize("cls", [Anthropic, AsyncAnthropic])
def test_the_sdk_sends_through_its_httpx2_clients_send(cls: type) -> None:
    client = cls(api_key="k", base_url="http://127.0.0.1:9")
    http = getattr(client, HTTP_CLIENT)
    import httpx2

    assert isinstance(http, httpx2.Client | httpx2.AsyncClient), (
        f"client.{HTTP_CLIENT} is no longer an httpx2 client"
    )
    assert callable(getattr(http, SEND))
    assert_in_source(cls._attempt_request, f"self.{HTTP_CLIENT}.{SEND}(", hook=SEND_HOOK)
    post = inspect.signature(cls.post)
    for name in ("path", "cast_to", "body", "options", "stream", "stream_cls"):
        assert name in post.parameters, f"{cls.__name__}.post lost `{name}` (anthropic/_base_client.py)"


def test_the_stream_helper_posts_through_the_resource_not_create() -> None:
    from anthropic.resources.messages.messages import AsyncMessages, Messages

    for cls in (Messages, AsyncMessages):
        assert_in_source(cls.stream, "self._post", hook=RESOURCE_HOOKS[0])


def test_streams_iterate_a_replaceable_iterator() -> None:
    # anthropic/_streaming.py: Stream.__iter__ / __next__ read `self._iterator`.
    from anthropic._streaming import AsyncStream, Stream

    for cls, method in ((Stream, "__iter__"), (AsyncStream, "__aiter__")):
        assert "_iterator" in vars(cls), f"{cls.__name__}._iterator is gone"
        assert_in_source(getattr(cls, method), "self._iterator")


def test_copy_hooks_and_the_tool_runner_exist() -> None:
    for name in COPY_HOOKS:
        assert callable(getattr(Anthropic, name)), f"Anthropic.{name} is gone (anthropic/_client.py)"
    assert Anthropic.with_options is Anthropic.copy
    client = Anthropic(api_key="k", base_url="http://127.0.0.1:9")
    assert callable(getattr(resolve(client, RUNNER_HOOK[0]), RUNNER_HOOK[1]))
    from anthropic.lib.tools._beta_runner import BaseAsyncToolRunner, BaseSyncToolRunner

    for cls in (BaseSyncToolRunner, BaseAsyncToolRunner):
        params = list(inspect.signature(getattr(cls, RUN_TOOL)).parameters)
        assert params == ["self", "tool", "tool_use"], f"{cls.__name__}.{RUN_TOOL} changed: {params}"
