"""Fails loudly when a google-genai hook this adapter relies on moves (docs/google-genai.md has the
table, with the file:line each row was read at)."""

from __future__ import annotations

import inspect

from google import genai
from google.genai import _extra_utils, chats
from google.genai.models import AsyncModels, Models

from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported
from graphmind_google_genai import SUPPORTED
from graphmind_google_genai._hooks import ASYNC_HOOKS, SYNC_HOOKS, TOOL_HOOKS

GENERATE, STREAM, SCOPE, STREAM_SCOPE = SYNC_HOOKS
AGENERATE, ASTREAM, ASCOPE, ASTREAM_SCOPE = ASYNC_HOOKS
INVOKE, AINVOKE = TOOL_HOOKS


def test_the_installed_google_genai_is_in_the_supported_range() -> None:
    assert_supported(SUPPORTED)
    client = genai.Client(api_key="k")
    assert_hooks_stand(SYNC_HOOKS + ASYNC_HOOKS, client)
    assert_hooks_stand(TOOL_HOOKS, _extra_utils)
    client.close()


def test_each_request_goes_through_the_per_request_methods() -> None:
    assert_in_source(Models._generate_content, "self._api_client.request(", hook=GENERATE)
    assert_in_source(Models._generate_content_stream, "self._api_client.request_streamed(", hook=STREAM)
    assert_in_source(AsyncModels._generate_content, "self._api_client.async_request(", hook=AGENERATE)
    assert_in_source(
        AsyncModels._generate_content_stream, "self._api_client.async_request_streamed(", hook=ASTREAM
    )
    # every round and hop looks the method up on the instance (where the hook is)
    assert_in_source(Models._generate_content_with_continuation, "self._generate_content(", hook=GENERATE)
    assert_in_source(
        Models._generate_content_stream_with_continuation, "self._generate_content_stream(", hook=STREAM
    )
    assert_in_source(
        AsyncModels._generate_content_with_continuation, "await self._generate_content(", hook=AGENERATE
    )
    assert_in_source(
        AsyncModels._generate_content_stream_with_continuation,
        "await self._generate_content_stream(",
        hook=ASTREAM,
    )


def test_afc_calls_the_tools_inside_the_public_methods_through_the_module_names() -> None:
    assert_in_source(Models.generate_content, "_extra_utils.get_function_response_parts(", hook=SCOPE)
    assert_in_source(
        Models.generate_content_stream, "_extra_utils.get_function_response_parts(", hook=STREAM_SCOPE
    )
    assert_in_source(
        AsyncModels.generate_content, "_extra_utils.get_function_response_parts_async(", hook=ASCOPE
    )
    assert_in_source(
        AsyncModels.generate_content_stream,
        "_extra_utils.get_function_response_parts_async(",
        hook=ASTREAM_SCOPE,
    )
    assert_in_source(
        _extra_utils.get_function_response_parts, "invoke_function_from_dict_args(args, func)", hook=INVOKE
    )
    assert_in_source(
        _extra_utils.get_function_response_parts_async,
        "await invoke_function_from_dict_args_async(args, func)",
        "invoke_function_from_dict_args, args, func",
        hook=AINVOKE,
    )
    # the tool's own call, with the arguments converted for the function handed in
    assert_in_source(
        _extra_utils.invoke_function_from_dict_args, "convert_argument_from_function(", hook=INVOKE
    )
    assert list(inspect.signature(_extra_utils.invoke_function_from_dict_args).parameters) == [
        "args",
        "function_to_invoke",
    ]


def test_chats_send_through_the_models_instance() -> None:
    assert_in_source(chats.Chat.send_message, "self._modules.generate_content(", hook=SCOPE)
    assert_in_source(chats.AsyncChat.send_message, "await self._modules.generate_content(", hook=ASCOPE)
