"""The hook points, as one table that drives both instrument and uninstrument.

Every hook is an attribute set on the instance given (a resource object or the client), so
nothing global changes and another client in the process is untouched. A version change of the
SDK is one row here. `tests/test_hooks_upstream.py` fails loudly when a private hook moves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import graphmind
from graphmind.adapter.stainless import Api, Patches, copy_wrapper, patch_resources, resolve, send_wrapper

from ._apis import CHAT, RESPONSES
from ._request import SDK

__all__ = ["COPY_HOOKS", "MARK", "RESOURCE_HOOKS", "SEND_HOOK", "apply", "resolve", "undo"]

MARK = "_graphmind_openai"


@dataclass(frozen=True)
class ResourceHook:
    """`<resource>._post` on the instance, gating POSTs to exactly `path`."""

    resource: str  # attribute path from the client
    path: str
    api: Api  # its row of the API table
    openai: str  # the openai versions this row was read in and is tested against
    upstream: str  # where the hook lives upstream, and why it is enough

    @property
    def apis(self) -> dict[str, Api]:
        return {self.path: self.api}


RESOURCE_HOOKS: tuple[ResourceHook, ...] = (
    ResourceHook(
        "chat.completions",
        "/chat/completions",
        CHAT,
        ">=2,<4",
        # openai/_resource.py SyncAPIResource.__init__ / AsyncAPIResource.__init__ store
        # `self._post = client.post` on the instance. Every chat call shape posts through it:
        # resources/chat/completions/completions.py Completions.create (`self._post("/chat/completions")`),
        # lib/_chat_completion_resources.py parse() (`resource._post`) and stream() (`partial(resource.create)`),
        # and with_raw_response / with_streaming_response, which wrap the bound `create` / `parse`.
        "openai/_resource.py SyncAPIResource.__init__; resources/chat/completions/completions.py Completions.create",
    ),
    ResourceHook(
        "responses",
        "/responses",
        RESPONSES,
        ">=2,<4",
        # resources/responses/responses.py Responses.create (`self._post("/responses")`);
        # lib/_response_resources.py parse() (`resource._post`) and stream() (`partial(resource.create)`).
        # `responses.stream(response_id=...)` resumes with a GET (`retrieve`) and is not gated.
        "openai/_resource.py SyncAPIResource.__init__; resources/responses/responses.py Responses.create",
    ),
)

# openai/_base_client.py SyncAPIClient._send_request / AsyncAPIClient._send_request: called once per
# HTTP attempt inside `request()`'s retry loop (openai >= 2). Replaced on the instance to answer an
# inject with a synthetic response (no request leaves the process) and to see the final response.
SEND_HOOK = "_send_request"
SEND_HOOK_RANGE = ">=2,<4"
# openai/_client.py OpenAI.copy (`with_options = copy`): builds a new client; patch both names so
# derived clients are instrumented too.
COPY_HOOKS = ("copy", "with_options")


def is_async_client(client: Any) -> bool:
    from openai import AsyncOpenAI

    # `AsyncCompletions.create` is not a coroutine function to `inspect`: decide by type.
    return isinstance(client, AsyncOpenAI)


def apply(client: Any, session: graphmind.Client | None, instrument: Callable[..., Any]) -> Patches:
    is_async = is_async_client(client)
    state = Patches(session)
    try:
        patch_resources(state, client, RESOURCE_HOOKS, SDK, is_async)
        state.set(client, SEND_HOOK, send_wrapper(getattr(client, SEND_HOOK), SDK, is_async))
        for name in COPY_HOOKS:
            state.set(client, name, copy_wrapper(getattr(client, name), state, instrument))
    except Exception:
        state.undo()
        raise
    return state


def undo(state: Patches) -> None:
    state.undo()
