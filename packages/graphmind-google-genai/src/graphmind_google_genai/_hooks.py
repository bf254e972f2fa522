"""The hook table: `instrument_google_genai(client)` / `uninstrument_google_genai(client)` on
`graphmind.adapter`'s scaffold (`Hook` rows, one `Patches`, `instrument_once`).

Per client, its `Models` (`client.models`) and `AsyncModels` (`client.aio.models`) instances get
their per-request methods (one `llm:step` per request the SDK sends) and their public
`generate_content[_stream]` (the scope that tells AFC's tool calls whose they are); the process
gets one shared patch of the SDK's tool invocation (removed with the last instrumented client).
Lines are google-genai 2.34.0's (google/genai/...); `tests/test_hooks_upstream.py` reads each row
against the installed SDK and fails when one moves.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from google.genai import _extra_utils
from google.genai.client import AsyncClient
from google.genai.models import AsyncModels, Models

import graphmind
from graphmind.adapter import Hook, Patches, hook_moved, instrument_once, uninstrument_once

from ._model import wrap_agenerate, wrap_astream, wrap_generate, wrap_stream
from ._tools import (
    wrap_ainvoke,
    wrap_ascope,
    wrap_astream_scope,
    wrap_invoke,
    wrap_scope,
    wrap_stream_scope,
)
from ._version import SUPPORTED, __version__

T = TypeVar("T")
MARK = "_graphmind_google_genai"
# The shared tool patches' counts on `_extra_utils` (one key per patched attribute).
INVOKE_KEY = "_graphmind_google_genai_invoke"
AINVOKE_KEY = "_graphmind_google_genai_ainvoke"

SYNC_HOOKS = (
    Hook(
        "models",
        "_generate_content",
        wrap_generate,
        SUPPORTED,
        "models.py:4701 Models._generate_content -> self._api_client.request (:4750) once per request; "
        "generate_content calls it per AFC round and continuation hop (:6211, self._ lookup: the instance's wins)",
    ),
    Hook(
        "models",
        "_generate_content_stream",
        wrap_stream,
        SUPPORTED,
        "models.py:4797 Models._generate_content_stream -> self._api_client.request_streamed (:4858); "
        "generate_content_stream reads it per round and hop (:6232)",
    ),
    Hook(
        "models",
        "generate_content",
        wrap_scope,
        SUPPORTED,
        "models.py:6241 Models.generate_content: the AFC loop calls the tools in "
        "_extra_utils.get_function_response_parts (:6392); chats.py:276 Chat.send_message calls it too",
    ),
    Hook(
        "models",
        "generate_content_stream",
        wrap_stream_scope,
        SUPPORTED,
        "models.py:6420 Models.generate_content_stream: AFC calls the tools per chunk (:6585)",
    ),
)

ASYNC_HOOKS = (
    Hook(
        "aio.models",
        "_generate_content",
        wrap_agenerate,
        SUPPORTED,
        "models.py:6977 AsyncModels._generate_content -> self._api_client.async_request (:7026); "
        "called per AFC round and hop (:8428)",
    ),
    Hook(
        "aio.models",
        "_generate_content_stream",
        wrap_astream,
        SUPPORTED,
        "models.py:7073 AsyncModels._generate_content_stream -> async_request_streamed (:7134), "
        "awaited per round and hop (:8449)",
    ),
    Hook(
        "aio.models",
        "generate_content",
        wrap_ascope,
        SUPPORTED,
        "models.py:8459 AsyncModels.generate_content: AFC calls the tools in "
        "_extra_utils.get_function_response_parts_async (:8653)",
    ),
    Hook(
        "aio.models",
        "generate_content_stream",
        wrap_astream_scope,
        SUPPORTED,
        "models.py:8683 AsyncModels.generate_content_stream returns stream_generator(), whose AFC calls "
        "the tools per chunk (:8929)",
    ),
)

TOOL_HOOKS = (
    Hook(
        "",
        "invoke_function_from_dict_args",
        wrap_invoke,
        SUPPORTED,
        "_extra_utils.py:335 invoke_function_from_dict_args: get_function_response_parts calls it by "
        "its module name (:387), and get_function_response_parts_async for a sync function in a thread (:443)",
        shared=INVOKE_KEY,
    ),
    Hook(
        "",
        "invoke_function_from_dict_args_async",
        wrap_ainvoke,
        SUPPORTED,
        "_extra_utils.py:349 invoke_function_from_dict_args_async: an async function's call (:438)",
        shared=AINVOKE_KEY,
    ),
)


def _hooks_for(client: Any) -> tuple[Hook[Patches], ...]:
    """The rows for what was given: a Client (both), `client.aio` alone (its own `models`), or one
    `Models` / `AsyncModels` instance (the rows on it)."""
    if isinstance(client, Models | AsyncModels):
        rows = SYNC_HOOKS if isinstance(client, Models) else ASYNC_HOOKS
        return tuple(dataclasses.replace(h, target="") for h in rows)
    if isinstance(client, AsyncClient):
        return tuple(dataclasses.replace(h, target="models") for h in ASYNC_HOOKS)
    return SYNC_HOOKS + ASYNC_HOOKS


def instrument(client: T, session: graphmind.Client | None) -> T:
    def apply(target: Any) -> Patches:
        state = Patches(session)
        state.apply(target, _hooks_for(target), state)
        try:
            state.apply(_extra_utils, TOOL_HOOKS, state)
        except BaseException:
            state.undo()
            raise
        return state

    return instrument_once(
        client,
        MARK,
        session,
        apply,
        hook_moved("google-genai", "graphmind-google-genai", __version__, SUPPORTED),
    )


def uninstrument(client: T) -> T:
    return uninstrument_once(client, MARK)
