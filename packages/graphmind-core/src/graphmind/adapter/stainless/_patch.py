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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .. import engine_for
from ._api import Api
from ._call import Call
from ._exchange import Sdk
from ._run import run_async, run_sync

if TYPE_CHECKING:
    from ..._api.client import Client

C = TypeVar("C")
P = TypeVar("P", bound="Patches")


class ResourceHook(Protocol):
    """A row of an adapter's hook table: the resource's attribute path, its POST paths' API rows."""

    @property
    def resource(self) -> str: ...

    @property
    def apis(self) -> Mapping[str, Api]: ...


@dataclass
class Patches:
    """What instrumenting one client did, so uninstrument can undo exactly that."""

    session: Client | None
    patched: list[tuple[Any, str, Any, bool]] = field(
        default_factory=list
    )  # (object, attribute, previous value, was it on the instance)

    def set(self, obj: Any, name: str, value: Any) -> None:
        had = name in vars(obj)
        self.patched.append((obj, name, vars(obj).get(name), had))
        setattr(obj, name, value)

    def undo(self) -> None:
        for obj, name, previous, had in reversed(self.patched):
            if had:
                setattr(obj, name, previous)
            else:
                vars(obj).pop(name, None)
        self.patched.clear()


def resolve(obj: Any, dotted: str) -> Any:
    """`client.<a>.<b>`: a resource by its attribute path."""
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


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
            if api is None or args or not engine.live:
                return await original(path, *args, **kwargs)
            return await run_async(original, Call.of(sdk, api, label, engine, path, kwargs))

        return apost

    @functools.wraps(original)
    def post(path: str, *args: Any, **kwargs: Any) -> Any:
        api = apis.get(path)
        engine = engine_for(state.session)
        if api is None or args or not engine.live:
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
    state: Patches, client: Any, hooks: Iterable[ResourceHook], sdk: Sdk, is_async: bool
) -> None:
    """Each hook's `resource._post`, on this client's resource instances."""
    for hook in hooks:
        resource = resolve(client, hook.resource)
        label = f"{hook.resource}._post"
        state.set(resource, "_post", post_wrapper(resource._post, hook.apis, label, sdk, state, is_async))


def instrument_client(
    client: C,
    session: Client | None,
    mark: str,
    apply: Callable[[C, Client | None], P],
    hook_moved: Callable[[AttributeError], tuple[str, str]],
) -> C:
    """Instruments `client` once (the state kept under `mark` in its `__dict__`). A disabled session
    changes nothing at all; a hook the installed SDK no longer has (`AttributeError` from `apply`)
    warns once with `hook_moved(exc)` (message, key) and leaves the client uninstrumented."""
    if mark in vars(client):
        return client
    engine = engine_for(session)
    if not engine.enabled:
        # A disabled session, the default one included (GRAPHMIND_DISABLED=1): the client stays
        # exactly as it was, zero overhead (environment page: the adapter is the identity).
        return client
    try:
        state = apply(client, session)
    except AttributeError as exc:
        message, key = hook_moved(exc)
        engine.warn(message, key=key)
        return client
    vars(client)[mark] = state
    return client


def uninstrument_client(client: C, mark: str, undo: Callable[[Any], None]) -> C:
    """Undoes `instrument_client`; a client that is not instrumented is returned unchanged."""
    state = vars(client).pop(mark, None)
    if state is not None:
        undo(state)
    return client
