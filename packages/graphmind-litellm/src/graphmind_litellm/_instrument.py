"""`instrument_litellm()` / `uninstrument_litellm()`: the `litellm` functions of the table in
`_apis.py` replaced by gated wrappers, and put back.

One `graphmind.adapter.Hook` row per function, on the `litellm` module itself (a process-wide patch),
applied and undone by one `Patches`: idempotent (a second call patches nothing more; its `session`
becomes the one reported to), reversible (the very original functions go back; a function someone
else replaced after us stays theirs), and a disabled session patches nothing. Only the public
`litellm.<name>` attributes are replaced: code that did `from litellm import completion` before
instrumenting keeps the function it took (see README).

The upstream place of each function is in its row (`_apis.py`'s docstring tells the call path).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import litellm

import graphmind
from graphmind.adapter import Hook, Patches, enabled_for, engine_for

from . import _call
from ._apis import APIS, Api
from ._version import SUPPORTED

_UPSTREAM = {
    "completion": "litellm/chat_completions/dispatch.py:111 completion",
    "acompletion": "litellm/chat_completions/dispatch.py:127 acompletion",
    "text_completion": "litellm/main.py:8056 text_completion",
    "atext_completion": "litellm/main.py:7984 atext_completion",
    "responses": "litellm/responses/dispatch.py:130 responses",
    "aresponses": "litellm/responses/dispatch.py:146 aresponses",
    "embedding": "litellm/embeddings/dispatch.py:71 embedding",
    "aembedding": "litellm/embeddings/dispatch.py:86 aembedding",
}


def _sync_wrapper(api: Api) -> Callable[[Callable[..., Any], Patches], Callable[..., Any]]:
    def wrap(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            engine = engine_for(state.session)  # per call: graphmind.configure() may replace the default
            # `completion(..., acompletion=True)` returns LiteLLM's coroutine: gated by the async path only
            # when the app awaits `litellm.acompletion` itself, so it passes through here untouched.
            if not engine.live or kwargs.get("acompletion") is True:
                return original(*args, **kwargs)
            return _call.run_sync(original, api, engine, args, kwargs)

        return wrapper

    return wrap


def _async_wrapper(api: Api) -> Callable[[Callable[..., Any], Patches], Callable[..., Any]]:
    def wrap(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
        @functools.wraps(original)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            engine = engine_for(state.session)  # per call: graphmind.configure() may replace the default
            if not engine.live:
                return await original(*args, **kwargs)
            return await _call.run_async(original, api, engine, args, kwargs)

        return wrapper

    return wrap


# One row per function of the API table; a LiteLLM without one of them skips its row.
HOOKS: tuple[Hook[Patches], ...] = tuple(
    Hook(
        "",
        api.attr,
        (_async_wrapper if api.is_async else _sync_wrapper)(api),
        SUPPORTED,
        _UPSTREAM[api.attr],
        optional=True,
    )
    for api in APIS
)

_lock = threading.Lock()
# The one state of the process: the patches on `litellm` and the session the wrappers report to
# (None: the default client at each call). The latest `instrument_litellm(session=...)` sets it:
# the functions are patched once, the session can change.
_state = Patches()


def instrument(session: graphmind.Client | None) -> bool:
    """Replaces every function of the table that this LiteLLM has. False when nothing was patched."""
    enabled = enabled_for(session)  # builds no client: the default one is looked up per call
    with _lock:
        if not enabled:
            # Disabled: nothing is patched. Already patched for another session: calls now report to
            # this disabled one, i.e. they go straight through.
            if _state.active:
                _state.session = session
            return False
        _state.session = session
        _state.apply(litellm, HOOKS, _state)
        return _state.active


def uninstrument() -> None:
    with _lock:
        _state.undo()
        _state.session = None


def instrumented() -> bool:
    return _state.active
