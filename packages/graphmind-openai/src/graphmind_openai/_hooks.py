"""The hook points, as one table that drives both instrument and uninstrument.

Every hook is an attribute set on the instance given (a resource object or the client), so
nothing global changes and another client in the process is untouched. A version change of the
SDK is one row here. `tests/test_hooks_upstream.py` fails loudly when a private hook moves.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import graphmind
from graphmind.adapter import engine_for

from ._apis import CHAT, RESPONSES, Api
from ._request import EXCHANGE, Call, run_async, run_sync

MARK = "_graphmind_openai"


@dataclass(frozen=True)
class ResourceHook:
    """`<resource>._post` on the instance, gating POSTs to exactly `path`."""

    resource: str  # attribute path from the client
    path: str
    api: Api  # its row of the API table
    openai: str  # the openai versions this row was read in and is tested against
    upstream: str  # where the hook lives upstream, and why it is enough


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


@dataclass
class State:
    """What instrument_openai did to one client, so uninstrument can undo exactly that."""

    session: graphmind.Client | None
    patched: list[tuple[Any, str, Any, bool]]  # (object, attribute, previous value, was it on the instance)


def resolve(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _set(state: State, obj: Any, name: str, value: Any) -> None:
    had = name in vars(obj)
    state.patched.append((obj, name, vars(obj).get(name), had))
    setattr(obj, name, value)


def _post_wrapper(
    original: Callable[..., Any], hook: ResourceHook, state: State, is_async: bool
) -> Callable[..., Any]:
    label = f"{hook.resource}._post"

    if is_async:

        @functools.wraps(original)
        async def apost(path: str, *args: Any, **kwargs: Any) -> Any:
            engine = engine_for(state.session)
            if args or path != hook.path or not engine.live:
                return await original(path, *args, **kwargs)
            return await run_async(original, Call.of(hook.api, label, engine, path, kwargs))

        return apost

    @functools.wraps(original)
    def post(path: str, *args: Any, **kwargs: Any) -> Any:
        engine = engine_for(state.session)
        if args or path != hook.path or not engine.live:
            return original(path, *args, **kwargs)
        return run_sync(original, Call.of(hook.api, label, engine, path, kwargs))

    return post


def _send_wrapper(original: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    if is_async:

        @functools.wraps(original)
        async def asend(request: Any, *args: Any, **kwargs: Any) -> Any:
            exchange = EXCHANGE.get()
            if exchange is None:
                return await original(request, *args, **kwargs)
            if exchange.reply is not None:
                exchange.answered += 1
                exchange.response = exchange.reply.build(request)
            else:
                exchange.sent += 1
                exchange.response = await original(request, *args, **kwargs)
            return exchange.response

        return asend

    @functools.wraps(original)
    def send(request: Any, *args: Any, **kwargs: Any) -> Any:
        exchange = EXCHANGE.get()
        if exchange is None:
            return original(request, *args, **kwargs)
        if exchange.reply is not None:
            exchange.answered += 1
            exchange.response = exchange.reply.build(request)
        else:
            exchange.sent += 1
            exchange.response = original(request, *args, **kwargs)
        return exchange.response

    return send


def _copy_wrapper(
    original: Callable[..., Any], state: State, instrument: Callable[..., Any]
) -> Callable[..., Any]:
    @functools.wraps(original)
    def copy(*args: Any, **kwargs: Any) -> Any:
        return instrument(original(*args, **kwargs), session=state.session)

    return copy


def is_async_client(client: Any) -> bool:
    from openai import AsyncOpenAI

    # `AsyncCompletions.create` is not a coroutine function to `inspect`: decide by type.
    return isinstance(client, AsyncOpenAI)


def apply(client: Any, session: graphmind.Client | None, instrument: Callable[..., Any]) -> State:
    is_async = is_async_client(client)
    state = State(session, [])
    try:
        for hook in RESOURCE_HOOKS:
            resource = resolve(client, hook.resource)
            _set(state, resource, "_post", _post_wrapper(resource._post, hook, state, is_async))
        _set(state, client, SEND_HOOK, _send_wrapper(getattr(client, SEND_HOOK), is_async))
        for name in COPY_HOOKS:
            _set(state, client, name, _copy_wrapper(getattr(client, name), state, instrument))
    except Exception:
        undo(state)
        raise
    return state


def undo(state: State) -> None:
    for obj, name, previous, had in reversed(state.patched):
        if had:
            setattr(obj, name, previous)
        else:
            vars(obj).pop(name, None)
    state.patched.clear()
