"""The process-wide form's runs: a `query()` or a `ClaudeSDKClient` connection is one GraphMind run,
its options instrumented on the way in.

`query()` iterates `InternalClient.process_query(prompt, options, transport)`
(claude_agent_sdk/query.py:129, defined at _internal/client.py:34); the wrapper opens the run around
that iteration, so the Query's reader task (started inside it) and every hook callback and
in-process tool call it runs carry the run. `ClaudeSDKClient.connect` (client.py:93) starts the same
reader for a long-lived session: the run opens there and ends at `disconnect` (client.py:607). A
session started inside a run of the app's (`with graphmind.run(...)`) opens none: its calls nest there.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

import graphmind
from graphmind.adapter import Patches, RunAborted, RunContext

from ._options import instrument as instrument_options
from ._options import state_of

_FRAMEWORK = {"framework": "claude-agent-sdk"}


def _client(state: Patches) -> graphmind.Client:
    return state.session if state.session is not None else graphmind.get_client()


def _opens_run(state: Patches) -> bool:
    engine = state.engine()
    return engine.live and engine.current_run() is None and engine.current_parent() is None


def _prompt_meta(prompt: Any) -> dict[str, Any]:
    return {**_FRAMEWORK, "input": prompt} if isinstance(prompt, str) else dict(_FRAMEWORK)


class SessionRuns:
    """Whether the process-wide form is on (`instrument_claude_agent_sdk()`): every session's options
    instrumented and each session one run. Off, only options instrumented by hand are gated."""

    on = False


def _raise_if_aborted(run: RunContext | None, options: Any) -> None:
    """The session stopped on GraphMind's side (an abort, a replay's divergence under "fail"): the app
    learns it as from any adapter, whatever the SDK made of it on the way."""
    session = state_of(options)
    fatal = session.fatal if session is not None else None
    if session is not None and fatal is not None:
        session.fatal = None
        raise fatal
    if run is not None and run.aborted:
        raise RunAborted(run.run_id)


async def _messages(
    original: Callable[..., AsyncGenerator[Any, None]],
    run: RunContext | None,
    call: tuple[Any, ...],
    kwargs: Any,
) -> AsyncGenerator[Any, None]:
    options = call[2]
    session = state_of(options)
    if session is not None:
        session.fatal = None
    inner = original(*call, **kwargs)
    try:
        async for message in inner:
            yield message
    except Exception as exc:
        try:
            _raise_if_aborted(run, options)
        except BaseException as fatal:
            raise fatal from exc
        raise
    finally:
        await inner.aclose()
    _raise_if_aborted(run, options)


def wrap_process_query(
    original: Callable[..., AsyncGenerator[Any, None]], state: Patches
) -> Callable[..., Any]:
    async def process_query(
        self: Any, prompt: Any, options: Any, *args: Any, **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        # Each generator this wrapper iterates is closed in its `finally` (an app that breaks out of
        # its `async for` closes this one): `async for` alone leaves an inner generator to the
        # garbage collector, and the SDK closes its transport in its generator's `finally` before it
        # removes its temporary config dir (claude_agent_sdk/_internal/client.py:56-62).
        engine = state.engine()
        if not engine.live or (state_of(options) is None and not SessionRuns.on):
            inner = original(self, prompt, options, *args, **kwargs)
            try:
                async for message in inner:
                    yield message
            finally:
                await inner.aclose()
            return
        call = (self, prompt, instrument_options(options, state.session), *args)
        if not (SessionRuns.on and _opens_run(state)):
            gated = _messages(original, engine.current_run(), call, kwargs)
            try:
                async for message in gated:
                    yield message
            finally:
                await gated.aclose()
            return
        async with _client(state).run("claude-agent", _prompt_meta(prompt)) as run:
            gated = _messages(original, run, call, kwargs)
            try:
                async for message in gated:
                    yield message
            finally:
                await gated.aclose()

    process_query.__wrapped__ = original  # type: ignore[attr-defined]
    return process_query


_SCOPE = "_graphmind_run_scope"


def wrap_connect(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    async def connect(self: Any, *args: Any, **kwargs: Any) -> Any:
        if state.engine().live and (SessionRuns.on or state_of(self.options) is not None):
            self.options = instrument_options(self.options, state.session)
            if SessionRuns.on and _opens_run(state) and getattr(self, _SCOPE, None) is None:
                scope = _client(state).run("claude-agent", dict(_FRAMEWORK))
                await scope.__aenter__()
                setattr(self, _SCOPE, scope)
        return await original(self, *args, **kwargs)

    connect.__wrapped__ = original  # type: ignore[attr-defined]
    return connect


def wrap_disconnect(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    async def disconnect(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await original(self, *args, **kwargs)
        finally:
            scope = getattr(self, _SCOPE, None)
            if scope is not None:
                setattr(self, _SCOPE, None)
                try:
                    await scope.__aexit__(None, None, None)
                except ValueError:  # disconnected from another task than connect: the run still ends
                    pass

    disconnect.__wrapped__ = original  # type: ignore[attr-defined]
    return disconnect
