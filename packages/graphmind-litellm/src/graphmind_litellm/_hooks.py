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
from collections.abc import Callable
from typing import Any

import litellm

from graphmind.adapter import Hook, Patches, ProcessPatch, engine_for

from . import _call
from ._apis import BY_NAME, Api
from ._version import SUPPORTED


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


def _row(attr: str, upstream: str) -> Hook[Patches]:
    """The row of one `litellm` function of the API table: its wrapper, and where upstream it stands.
    A LiteLLM without the function skips its row (`optional`)."""
    api = BY_NAME[attr]
    wrap = (_async_wrapper if api.is_async else _sync_wrapper)(api)
    return Hook("", attr, wrap, SUPPORTED, upstream, optional=True)


# The only hook table (litellm 1.110.2): every row on the `litellm` module itself, process-wide.
HOOKS: tuple[Hook[Patches], ...] = (
    _row("completion", "litellm/chat_completions/dispatch.py:111 completion"),
    _row("acompletion", "litellm/chat_completions/dispatch.py:127 acompletion"),
    _row("text_completion", "litellm/main.py:8056 text_completion"),
    _row("atext_completion", "litellm/main.py:7984 atext_completion"),
    _row("responses", "litellm/responses/dispatch.py:130 responses"),
    _row("aresponses", "litellm/responses/dispatch.py:146 aresponses"),
    _row("embedding", "litellm/embeddings/dispatch.py:71 embedding"),
    _row("aembedding", "litellm/embeddings/dispatch.py:86 aembedding"),
)
# The one state of the process: the patches on `litellm` and the session the wrappers report to
# (None: the default client at each call). The latest `instrument_litellm(session=...)` sets it:
# the functions are patched once, the session can change.
PATCH = ProcessPatch((litellm, row) for row in HOOKS)
