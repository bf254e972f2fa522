"""The hook points, as one table that drives both instrument and uninstrument.

Every hook is a `graphmind.adapter.Hook` row, an attribute set on the instance given (a resource
object or the client) and undone by the `Patches` that set it, so nothing global changes and another client in the process is untouched. A version change of the
SDK is one row here. `tests/test_hooks_upstream.py` fails loudly when a private hook moves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import graphmind
from graphmind.adapter import Hook, hook_moved, resolve
from graphmind.adapter.stainless import Patches, instrument_hooks, resource_hook, wrap_copy, wrap_send

from ._apis import CHAT, RESPONSES
from ._request import SDK
from ._version import SUPPORTED, __version__

__all__ = ["COPY_HOOKS", "HOOKS", "MARK", "RESOURCE_HOOKS", "SEND_HOOK", "instrument", "resolve"]

C = TypeVar("C")
MARK = "_graphmind_openai"

RESOURCE_HOOKS: tuple[Hook[Patches], ...] = (
    resource_hook(
        "chat.completions",
        {"/chat/completions": CHAT},
        "openai>=2,<4",
        # openai/_resource.py SyncAPIResource.__init__ / AsyncAPIResource.__init__ store
        # `self._post = client.post` on the instance. Every chat call shape posts through it:
        # resources/chat/completions/completions.py Completions.create (`self._post("/chat/completions")`),
        # lib/_chat_completion_resources.py parse() (`resource._post`) and stream() (`partial(resource.create)`),
        # and with_raw_response / with_streaming_response, which wrap the bound `create` / `parse`.
        "openai/_resource.py:18 SyncAPIResource.__init__ (:34 async); "
        "resources/chat/completions/completions.py:1611 Completions.create",
    ),
    resource_hook(
        "responses",
        {"/responses": RESPONSES},
        "openai>=2,<4",
        # resources/responses/responses.py Responses.create (`self._post("/responses")`);
        # lib/_response_resources.py parse() (`resource._post`) and stream() (`partial(resource.create)`).
        # `responses.stream(response_id=...)` resumes with a GET (`retrieve`) and is not gated.
        "openai/_resource.py:18 SyncAPIResource.__init__; resources/responses/responses.py:1411 Responses.create",
    ),
)

# openai/_base_client.py SyncAPIClient._send_request / AsyncAPIClient._send_request: called once per
# HTTP attempt inside `request()`'s retry loop (openai >= 2). Replaced on the instance to answer an
# inject with a synthetic response (no request leaves the process) and to see the final response.
SEND_HOOK = "_send_request"
SEND = Hook(
    "",
    SEND_HOOK,
    wrap_send,
    "openai>=2,<4",
    "openai/_base_client.py:1183 SyncAPIClient.request -> self._send_request (:1805 async)",
)
# openai/_client.py OpenAI.copy (`with_options = copy`): builds a new client; patch both names so
# derived clients are instrumented too.
COPY_HOOKS = ("copy", "with_options")
HOOKS: tuple[Hook[Patches], ...] = (
    *RESOURCE_HOOKS,
    SEND,
    *(
        Hook(
            "", name, wrap_copy, "openai>=2,<4", "openai/_client.py:578 OpenAI.copy, :632 with_options = copy"
        )
        for name in COPY_HOOKS
    ),
)

HOOK_MOVED = hook_moved("openai", "graphmind-openai", __version__, SUPPORTED)


def instrument(
    client: C, session: graphmind.Client | None, clients: tuple[type, type], again: Callable[..., Any]
) -> C:
    """Every row on `client`, one of the SDK's `clients` (`again`: the adapter's instrument function)."""
    return instrument_hooks(client, session, MARK, HOOKS, SDK, clients, again, HOOK_MOVED)
