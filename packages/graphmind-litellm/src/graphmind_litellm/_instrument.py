"""`instrument_litellm()` / `uninstrument_litellm()`: the `litellm` functions of the table in
`_apis.py` replaced by gated wrappers, and put back.

Idempotent (a second call patches nothing more; its `session` becomes the one reported to), reversible (the very original functions go back), and a
disabled session patches nothing. Only the public `litellm.<name>` attributes are replaced: code that
did `from litellm import completion` before instrumenting keeps the function it took (see README).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import litellm

import graphmind
from graphmind.adapter import engine_for

from . import _call
from ._apis import APIS, Api

MARK = "__graphmind_litellm__"

_lock = threading.Lock()
_originals: dict[str, Callable[..., Any]] = {}  # attribute -> the function it held before instrumenting
# The session the wrappers report to (None: the default client at each call). The latest
# `instrument_litellm(session=...)` sets it: the functions are patched once, the session can change.
_session: list[graphmind.Client | None] = [None]


def _sync_wrapper(original: Callable[..., Any], api: Api) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        engine = engine_for(_session[0])
        # `completion(..., acompletion=True)` returns LiteLLM's coroutine: gated by the async path only
        # when the app awaits `litellm.acompletion` itself, so it passes through here untouched.
        if not engine.live or kwargs.get("acompletion") is True:
            return original(*args, **kwargs)
        return _call.run_sync(original, api, engine, args, kwargs)

    setattr(wrapper, MARK, True)
    return wrapper


def _async_wrapper(original: Callable[..., Any], api: Api) -> Callable[..., Any]:
    @functools.wraps(original)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        engine = engine_for(_session[0])
        if not engine.live:
            return await original(*args, **kwargs)
        return await _call.run_async(original, api, engine, args, kwargs)

    setattr(wrapper, MARK, True)
    return wrapper


def instrument(session: graphmind.Client | None) -> bool:
    """Replaces every function of the table that this LiteLLM has. False when nothing was patched."""
    enabled = engine_for(session).enabled
    with _lock:
        if not enabled:
            # Disabled: nothing is patched. Already patched for another session: calls now report to
            # this disabled one, i.e. they go straight through.
            if _originals:
                _session[0] = session
            return False
        _session[0] = session
        if _originals:
            return True
        for api in APIS:
            original = getattr(litellm, api.attr, None)
            if original is None or getattr(original, MARK, False):
                continue
            make = _async_wrapper if api.is_async else _sync_wrapper
            _originals[api.attr] = original
            setattr(litellm, api.attr, make(original, api))
        return bool(_originals)


def uninstrument() -> None:
    with _lock:
        for attr, original in _originals.items():
            if getattr(getattr(litellm, attr, None), MARK, False):
                setattr(litellm, attr, original)
        _originals.clear()
        _session[0] = None


def instrumented() -> bool:
    return bool(_originals)
