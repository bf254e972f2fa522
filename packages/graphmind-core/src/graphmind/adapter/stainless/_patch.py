"""Patching one client instance, and undoing exactly that: the `resource._post` wrapper that makes a
POST one node, and the copy wrapper that instruments derived clients (`copy()` / `with_options()`).

`_resource.py` in both SDKs (`SyncAPIResource.__init__` / `AsyncAPIResource.__init__`) stores
`self._post = client.post` on each resource instance, and every call shape of a resource (create,
parse, the stream helpers, with_raw_response / with_streaming_response) posts through it: one
attribute per resource sees them all, and nothing global changes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from .. import Hook, engine_for, instrument_once, uninstrument_once
from .. import Patches as AdapterPatches
from .._owner import _OWNER  # an outer adapter owns this model call (_owner.py): pass it through
from ._api import Api
from ._call import Call
from ._exchange import Sdk, send_wrapper
from ._run import run_async, run_sync

if TYPE_CHECKING:
    from ..._api.client import Client

C = TypeVar("C")
P = TypeVar("P", bound="Patches")


@dataclass(eq=False)
class Patches(AdapterPatches):
    """What instrumenting one client did (`graphmind.adapter.Patches`: undo undoes exactly that), and
    what its wrappers need: the adapter's `Sdk`, whether the client is async, and the adapter's
    instrument function (derived clients are instrumented with it)."""

    sdk: Sdk | None = None
    is_async: bool = False
    instrument: Callable[..., Any] | None = None


# A row of an adapter's hook table (the one hook-row type; kept under its old name here).
ResourceHook = Hook


@dataclass(frozen=True)
class PostHook:
    """The wrap of a `resource._post` row: POSTs to the paths in `apis` (each its API's row) are gated."""

    apis: Mapping[str, Api]
    label: str  # `<resource>._post`, in warnings

    def __call__(self, original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
        assert state.sdk is not None, "a Stainless Patches needs its Sdk"
        return post_wrapper(original, self.apis, self.label, state.sdk, state, state.is_async)


def resource_hook(resource: str, apis: Mapping[str, Api], supported: str, upstream: str) -> Hook[Patches]:
    """The row that patches `client.<resource>._post` on the instance, gating POSTs to the paths in `apis`."""
    return Hook(resource, "_post", PostHook(apis, f"{resource}._post"), supported, upstream)


def wrap_send(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """The wrap of a send row (one call per HTTP attempt): see `send_wrapper`."""
    assert state.sdk is not None, "a Stainless Patches needs its Sdk"
    return send_wrapper(original, state.sdk, state.is_async)


def wrap_copy(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    """The wrap of a copy row (`copy` / `with_options`): the derived client is instrumented too."""
    assert state.instrument is not None, "a Stainless Patches needs the adapter's instrument function"
    return copy_wrapper(original, state, state.instrument)


def post_wrapper(
    original: Callable[..., Any],
    apis: Mapping[str, Api],
    label: str,
    sdk: Sdk,
    state: Patches,
    is_async: bool,
) -> Callable[..., Any]:
    """`resource._post` gating POSTs to the paths in `apis` (each its API's row); any other call passes."""
    if is_async:

        @functools.wraps(original)
        async def apost(path: str, *args: Any, **kwargs: Any) -> Any:
            api = apis.get(path)
            engine = engine_for(state.session)
            if api is None or args or not engine.live or _OWNER.get() is not None:
                return await original(path, *args, **kwargs)
            return await run_async(original, Call.of(sdk, api, label, engine, path, kwargs))

        return apost

    @functools.wraps(original)
    def post(path: str, *args: Any, **kwargs: Any) -> Any:
        api = apis.get(path)
        engine = engine_for(state.session)
        if api is None or args or not engine.live or _OWNER.get() is not None:
            return original(path, *args, **kwargs)
        return run_sync(original, Call.of(sdk, api, label, engine, path, kwargs))

    return post


def copy_wrapper(
    original: Callable[..., Any], state: Patches, instrument: Callable[..., Any]
) -> Callable[..., Any]:
    """`client.copy()` / `with_options()`: the derived client is instrumented for the same session."""

    @functools.wraps(original)
    def copy(*args: Any, **kwargs: Any) -> Any:
        return instrument(original(*args, **kwargs), session=state.session)

    return copy


def patch_resources(
    state: Patches, client: Any, hooks: Iterable[Hook[Patches]], sdk: Sdk, is_async: bool
) -> None:
    """Applies the rows `hooks` (`resource_hook`, `wrap_send`, `wrap_copy` rows) to `client` for `sdk`."""
    state.sdk, state.is_async = sdk, is_async
    state.apply(client, hooks, state)


def instrument_client(
    client: C,
    session: Client | None,
    mark: str,
    apply: Callable[[C, Client | None], P],
    hook_moved: Callable[[AttributeError], tuple[str, str]],
) -> C:
    """Instruments `client` once (`graphmind.adapter.instrument_once`, the state kept under `mark`). A
    disabled session changes nothing at all; a hook the installed SDK no longer has (`AttributeError`
    from `apply`) warns once with `hook_moved(exc)` (message, key) and leaves the client uninstrumented."""
    return instrument_once(client, mark, session, lambda c: apply(c, session), hook_moved)


def instrument_hooks(
    client: C,
    session: Client | None,
    mark: str,
    hooks: Iterable[Hook[Patches]],
    sdk: Sdk,
    clients: tuple[type, type],
    instrument: Callable[..., Any],
    hook_moved: Callable[[AttributeError], tuple[str, str]],
) -> C:
    """`instrument_client` with the adapter's table: `hooks` applied to `client` by one `Patches` for
    `sdk`. `clients`: the SDK's sync and async client types (anything else is a TypeError naming
    them); `instrument`: the adapter's instrument function (it instruments the clients `copy()` derives)."""
    if not isinstance(client, clients):
        sync, async_ = (f"{sdk.key}.{cls.__name__}" for cls in clients)
        raise TypeError(
            f"{instrument.__name__}() takes an {sync} or {async_} client, got {type(client).__name__}"
        )
    is_async = isinstance(client, clients[1])

    def apply(target: C) -> Patches:
        state = Patches(session, sdk=sdk, is_async=is_async, instrument=instrument)
        state.apply(target, hooks, state)
        return state

    return instrument_once(client, mark, session, apply, hook_moved)


def uninstrument_client(client: C, mark: str, undo: Callable[[Any], None] | None = None) -> C:
    """Undoes `instrument_client`; a client that is not instrumented is returned unchanged."""
    return uninstrument_once(client, mark, undo)
