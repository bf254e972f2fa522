"""Patching one client instance, and undoing exactly that: the `resource._post` wrapper that makes a
POST one node, and the copy wrapper that instruments derived clients (`copy()` / `with_options()`).

`_resource.py` in both SDKs (`SyncAPIResource.__init__` / `AsyncAPIResource.__init__`) stores
`self._post = client.post` on each resource instance, and every call shape of a resource (create,
parse, the stream helpers, with_raw_response / with_streaming_response) posts through it: one
attribute per resource sees them all, and nothing global changes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import engine_for
from ._api import Api
from ._call import Call
from ._exchange import Sdk
from ._run import run_async, run_sync

if TYPE_CHECKING:
    from ..._client import Client


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
