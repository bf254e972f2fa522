"""The hook points, as one table that drives both instrument and uninstrument.

Every hook is an attribute set on an instance (a resource object, the client, or the client's
httpx2 client), so nothing global changes and another client in the process is untouched. A
version change of the SDK is one row here. `tests/test_hooks_upstream.py` fails loudly when a
private hook moves.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import graphmind
from graphmind.adapter import Engine, engine_for
from graphmind.adapter.stainless import Api, Patches, copy_wrapper, patch_resources, resolve, send_wrapper

from ._apis import BETA_COUNT_TOKENS, BETA_MESSAGES, COUNT_TOKENS, MESSAGES
from ._request import SDK
from ._tools import gate_runner

__all__ = [
    "COPY_HOOKS",
    "HTTP_CLIENT",
    "MARK",
    "RESOURCE_HOOKS",
    "RUNNER_HOOK",
    "SEND",
    "apply",
    "resolve",
    "undo",
]

MARK = "_graphmind_anthropic"
SEND_MARK = "_graphmind_anthropic_send"  # on the httpx2 client: [original send, number of clients using it]


@dataclass(frozen=True)
class ResourceHook:
    """`<resource>._post` on the instance, gating POSTs to the paths in `apis`."""

    resource: str  # attribute path from the client
    apis: Mapping[str, Api]  # POST path -> the API row
    anthropic: str  # the anthropic versions this row was read in and is tested against
    upstream: str  # where the hook lives upstream, and why it is enough


RESOURCE_HOOKS: tuple[ResourceHook, ...] = (
    ResourceHook(
        "messages",
        {"/v1/messages": MESSAGES, "/v1/messages/count_tokens": COUNT_TOKENS},
        ">=1,<3",
        # anthropic/_resource.py SyncAPIResource.__init__ / AsyncAPIResource.__init__ store
        # `self._post = client.post` on the instance. Every Messages call shape posts through it:
        # resources/messages/messages.py Messages.create (`self._post("/v1/messages")`), .parse, .stream
        # (`partial(self._post, ...)`, called by MessageStreamManager.__enter__, not through create),
        # .count_tokens (`self._post("/v1/messages/count_tokens")`), and with_raw_response /
        # with_streaming_response, which wrap the bound methods.
        "anthropic/_resource.py SyncAPIResource.__init__; resources/messages/messages.py Messages.create / stream",
    ),
    ResourceHook(
        "beta.messages",
        {
            "/v1/messages": BETA_MESSAGES,
            "/v1/messages/count_tokens": BETA_COUNT_TOKENS,
            # older releases (1.x, early 2.x) post the beta calls with a query string
            "/v1/messages?beta=true": BETA_MESSAGES,
            "/v1/messages/count_tokens?beta=true": BETA_COUNT_TOKENS,
        },
        ">=1,<3",
        # resources/beta/messages/messages.py Messages.create / parse / stream / count_tokens; the tool
        # runner's threads send through `client.beta.messages.create` (lib/threads/_beta_threads.py _send).
        "anthropic/_resource.py SyncAPIResource.__init__; resources/beta/messages/messages.py Messages.create / stream",
    ),
)

# resources/beta/messages/messages.py Messages.tool_runner: returns the runner whose `_run_tool`
# `_tools.gate_runner` gates (lib/tools/_beta_runner.py).
RUNNER_HOOK = ("beta.messages", "tool_runner")

# anthropic/_base_client.py SyncAPIClient._attempt_request / AsyncAPIClient._attempt_request: call
# `self._client.send(request, stream=...)` once per HTTP attempt inside `_request()`'s retry loop.
# `send` is set on that httpx2 client instance to answer an inject with a synthetic response (no
# request leaves the process) and to see the final response. The httpx2 client is shared with
# `copy()` / `with_options()` clients (and may be the app's own `http_client=`), so one wrapper is
# installed per httpx2 client, counted, and removed when the last instrumented client lets go.
HTTP_CLIENT = "_client"
SEND = "send"
# anthropic/_client.py Anthropic.copy (`with_options = copy`) and with_middleware (a copy with more
# middleware): build a new client; patch them so derived clients are instrumented too.
COPY_HOOKS = ("copy", "with_options", "with_middleware")


@dataclass
class State(Patches):
    """What instrument_anthropic did to one client, so uninstrument can undo exactly that."""

    http: Any = None  # the httpx2 client whose send this client counts on


def _runner_wrapper(original: Callable[..., Any], state: State, is_async: bool) -> Callable[..., Any]:
    def engine_of() -> Engine:
        return engine_for(state.session)

    @functools.wraps(original)
    def tool_runner(*args: Any, **kwargs: Any) -> Any:
        return gate_runner(original(*args, **kwargs), engine_of, is_async)

    return tool_runner


def _hold_send(state: State, client: Any, is_async: bool) -> None:
    http = getattr(client, HTTP_CLIENT)
    held = vars(http).get(SEND_MARK)
    if held is None:
        original = getattr(http, SEND)
        held = vars(http)[SEND_MARK] = [original, 0, SEND in vars(http)]
        setattr(http, SEND, send_wrapper(original, SDK, is_async))
    held[1] += 1
    state.http = http


def _release_send(state: State) -> None:
    http, state.http = state.http, None
    if http is None:
        return
    held = vars(http).get(SEND_MARK)
    if held is None:
        return
    held[1] -= 1
    if held[1] <= 0:
        original, _, was_on_instance = vars(http).pop(SEND_MARK)
        if was_on_instance:
            setattr(http, SEND, original)
        else:
            vars(http).pop(SEND, None)


def is_async_client(client: Any) -> bool:
    from anthropic import AsyncAnthropic

    return isinstance(client, AsyncAnthropic)


def apply(client: Any, session: graphmind.Client | None, instrument: Callable[..., Any]) -> State:
    is_async = is_async_client(client)
    state = State(session)
    try:
        patch_resources(state, client, RESOURCE_HOOKS, SDK, is_async)
        owner = resolve(client, RUNNER_HOOK[0])
        state.set(owner, RUNNER_HOOK[1], _runner_wrapper(getattr(owner, RUNNER_HOOK[1]), state, is_async))
        for name in COPY_HOOKS:
            if hasattr(client, name):  # with_middleware is newer than some supported versions
                state.set(client, name, copy_wrapper(getattr(client, name), state, instrument))
        _hold_send(state, client, is_async)
    except Exception:
        undo(state)
        raise
    return state


def undo(state: State) -> None:
    state.undo()
    _release_send(state)
