"""The hook points, as one table that drives both instrument and uninstrument.

Every hook is a `graphmind.adapter.Hook` row, an attribute set on an instance (a resource object,
the client, or the client's httpx2 client) and undone by the `Patches` that set it, so nothing
global changes and another client in the process is untouched. A
version change of the SDK is one row here. `tests/test_hooks_upstream.py` fails loudly when a
private hook moves.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import graphmind
from graphmind.adapter import Hook, hook_moved, resolve
from graphmind.adapter.stainless import Patches, instrument_hooks, resource_hook, wrap_copy, wrap_send

from ._apis import BETA_COUNT_TOKENS, BETA_MESSAGES, COUNT_TOKENS, MESSAGES
from ._request import SDK
from ._tools import gate_runner
from ._version import SUPPORTED, __version__

__all__ = [
    "COPY_HOOKS",
    "HOOKS",
    "HTTP_CLIENT",
    "MARK",
    "RESOURCE_HOOKS",
    "RUNNER_HOOK",
    "SEND",
    "instrument",
    "resolve",
]

C = TypeVar("C")
MARK = "_graphmind_anthropic"
SEND_MARK = (
    "_graphmind_anthropic_send"  # on the httpx2 client: the one send wrapper and how many clients use it
)
RANGE = "anthropic>=1,<3"

RESOURCE_HOOKS: tuple[Hook[Patches], ...] = (
    resource_hook(
        "messages",
        {"/v1/messages": MESSAGES, "/v1/messages/count_tokens": COUNT_TOKENS},
        RANGE,
        # anthropic/_resource.py SyncAPIResource.__init__ / AsyncAPIResource.__init__ store
        # `self._post = client.post` on the instance. Every Messages call shape posts through it:
        # resources/messages/messages.py Messages.create (`self._post("/v1/messages")`), .parse, .stream
        # (`partial(self._post, ...)`, called by MessageStreamManager.__enter__, not through create),
        # .count_tokens (`self._post("/v1/messages/count_tokens")`), and with_raw_response /
        # with_streaming_response, which wrap the bound methods.
        "anthropic/_resource.py:16 SyncAPIResource.__init__ (:32 async); "
        "resources/messages/messages.py:1264 Messages.create, :1299 stream",
    ),
    resource_hook(
        "beta.messages",
        {
            "/v1/messages": BETA_MESSAGES,
            "/v1/messages/count_tokens": BETA_COUNT_TOKENS,
            # older releases (1.x, early 2.x) post the beta calls with a query string
            "/v1/messages?beta=true": BETA_MESSAGES,
            "/v1/messages/count_tokens?beta=true": BETA_COUNT_TOKENS,
        },
        RANGE,
        # resources/beta/messages/messages.py Messages.create / parse / stream / count_tokens; the tool
        # runner's threads send through `client.beta.messages.create` (lib/threads/_beta_threads.py _send).
        "anthropic/_resource.py:16 SyncAPIResource.__init__; resources/beta/messages/messages.py:1991 Messages.stream",
    ),
)


def _wrap_runner(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    @functools.wraps(original)
    def tool_runner(*args: Any, **kwargs: Any) -> Any:
        return gate_runner(original(*args, **kwargs), state.engine, state.is_async)

    return tool_runner


# resources/beta/messages/messages.py Messages.tool_runner: returns the runner whose `_run_tool`
# `_tools.gate_runner` gates (lib/tools/_beta_runner.py).
RUNNER = Hook(
    "beta.messages",
    "tool_runner",
    _wrap_runner,
    RANGE,
    "anthropic/resources/beta/messages/messages.py:1705 Messages.tool_runner; lib/tools/_beta_runner.py _run_tool",
)
RUNNER_HOOK = (RUNNER.target, RUNNER.attr)

# anthropic/_base_client.py SyncAPIClient._attempt_request / AsyncAPIClient._attempt_request: call
# `self._client.send(request, stream=...)` once per HTTP attempt inside `_request()`'s retry loop.
# `send` is set on that httpx2 client instance to answer an inject with a synthetic response (no
# request leaves the process) and to see the final response. The httpx2 client is shared with
# `copy()` / `with_options()` clients (and may be the app's own `http_client=`), so one wrapper is
# installed per httpx2 client, counted, and removed when the last instrumented client lets go.
HTTP_CLIENT = "_client"
SEND = "send"
SEND_HOOK = Hook(
    HTTP_CLIENT,
    SEND,
    wrap_send,
    RANGE,
    "anthropic/_base_client.py:1456 SyncAPIClient._attempt_request -> self._client.send (:2246 async)",
    shared=SEND_MARK,
)
# anthropic/_client.py Anthropic.copy (`with_options = copy`) and with_middleware (a copy with more
# middleware): build a new client; patch them so derived clients are instrumented too.
# with_middleware is newer than some supported versions: optional.
COPY_HOOKS = ("copy", "with_options", "with_middleware")
HOOKS: tuple[Hook[Patches], ...] = (
    *RESOURCE_HOOKS,
    RUNNER,
    *(
        Hook("", name, wrap_copy, RANGE, "anthropic/_client.py:456 Anthropic.copy, :555, :557", optional=True)
        for name in COPY_HOOKS
    ),
    SEND_HOOK,
)

HOOK_MOVED = hook_moved("anthropic", "graphmind-anthropic", __version__, SUPPORTED)


def instrument(
    client: C, session: graphmind.Client | None, clients: tuple[type, type], again: Callable[..., Any]
) -> C:
    """Every row on `client`, one of the SDK's `clients` (`again`: the adapter's instrument function)."""
    return instrument_hooks(client, session, MARK, HOOKS, SDK, clients, again, HOOK_MOVED)
